package limit

import (
	"cmp"
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit/window"
	"github.com/headroom-go/headroom/telemetry"
)

// maxSegments bounds WindowOptions.Segments: the engine keeps one slot per
// segment, and finer steps than 1/1024 of the window buy nothing.
const maxSegments = 1024

// defaultSegments is how many steps a window slides in unless told.
const defaultSegments = 8

// PerWindow returns a sliding window that grants at most permits in any
// interval of length window. The window slides in 8 segments (set
// Options.PerWindow.Segments and call New for finer ones), so the budget
// cannot be spent at the end of one window and again at the start of the
// next.
func PerWindow(permits int, window time.Duration, opts ...Option) (Limiter, error) {
	return build(Options{PerWindow: &WindowOptions{Permits: permits, Window: headroom.Duration(window)}}, opts)
}

// perWindow is the blocking shell around window.SlidingWindow.
//
// Without a queue, AcquireN is one clock read and one TryAcquire. With one, a
// caller that finds the queue empty still takes at once; otherwise it queues
// (head-of-line: only the front waiter takes permits, after sleeping exactly
// until the engine says they fit, then it wakes the next).
type perWindow struct {
	shell
	epoch    time.Time
	engine   *window.SlidingWindow
	capacity int // largest cost AcquireN accepts

	queueing bool
	// waiting counts callers that have queued or are about to; while it is
	// 0 a caller may take permits without l.mu, since there is nobody to
	// barge past. A caller raises it before it looks at the engine under
	// l.mu, so one that finds it 0 arrived before anyone queued.
	waiting atomic.Int64
	mu      sync.Mutex // guards queue
	queue   waitQueue
}

// newPerWindow builds the PerWindow shape of a validated o.
func newPerWindow(o Options) (*perWindow, error) {
	w := o.PerWindow
	engine, err := window.NewSlidingWindow(w.Permits, time.Duration(w.Window), cmp.Or(w.Segments, defaultSegments))
	if err != nil {
		return nil, err
	}
	l := &perWindow{
		epoch:    time.Now(),
		engine:   engine,
		capacity: min(w.Permits, math.MaxInt32), // a Lease holds an int32 cost
		queueing: o.queueLimit() > 0,
		queue:    waitQueue{limit: o.queueLimit()},
	}
	l.dress(o, metrics.KindPerWindow, l)
	// The rate in permits per minute, which for a window of an hour is a
	// fraction.
	l.metrics.SetLimit(float64(w.Permits) * float64(time.Minute) / float64(w.Window))
	sample(l.metrics, l, (*perWindow).figures)
	return l, nil
}

// Acquire asks for one permit; see AcquireN.
func (l *perWindow) Acquire(ctx context.Context) (Lease, error) {
	// AcquireN's fast path, repeated: a call through the Limiter interface
	// then returns the lease once instead of copying it through two frames.
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, 1)
	}
	if l.waiting.Load() == 0 {
		now := time.Since(l.epoch)
		ok, retryAfter := l.engine.TryAcquire(now, 1)
		if ok {
			l.metrics.Acquired()
			return spentLease(&l.spent, now, 1), nil
		}
		if !l.queueing {
			return Lease{}, l.refuse(1, telemetry.ReasonNoPermit, retryAfter)
		}
		return l.acquireQueued(ctx, now, 1)
	}
	return l.AcquireN(ctx, 1)
}

// AcquireN takes cost permits if the window has room for them. Without a
// queue it refuses at once with a *RateLimitedError whose RetryAfter is
// exact: the time until enough earlier permits leave the window. With a
// queue it waits in order of priority (FIFO within a level; see
// Priority), unless the queue is full (telemetry.ReasonQueueFull) or ctx's
// deadline comes before the window could have room for this caller
// and those queued ahead of it (telemetry.ReasonDeadline). When ctx ends while it
// waits it returns waitEnded's error having taken nothing.
//
// Releasing a window lease frees nothing: a permit stays counted for Window
// after it was granted.
func (l *perWindow) AcquireN(ctx context.Context, cost int) (Lease, error) {
	if cost < 0 || cost > l.capacity {
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: l.capacity}
	}
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	now := time.Since(l.epoch)
	if cost == 0 {
		l.metrics.AcquiredN(cost)
		return Lease{granted: now}, nil
	}
	// waiting stays 0 without a queue.
	if l.waiting.Load() == 0 {
		ok, retryAfter := l.engine.TryAcquire(now, cost)
		if ok {
			l.metrics.AcquiredN(cost)
			return spentLease(&l.spent, now, cost), nil
		}
		if !l.queueing {
			return Lease{}, l.refuse(cost, telemetry.ReasonNoPermit, retryAfter)
		}
	}
	return l.acquireQueued(ctx, now, cost)
}

func (l *perWindow) acquireQueued(ctx context.Context, now time.Duration, cost int) (Lease, error) {
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	p, err := priorityOf(ctx)
	if err != nil {
		return Lease{}, err
	}
	l.waiting.Add(1)
	l.mu.Lock()
	if l.queue.empty() {
		if ok, _ := l.engine.TryAcquire(now, cost); ok {
			l.waiting.Add(-1)
			l.mu.Unlock()
			l.metrics.AcquiredN(cost)
			return spentLease(&l.spent, now, cost), nil
		}
	}
	if !l.queue.shed(cost, p.level(), l.shed) {
		ready := l.engine.RetryAfter(now, min(l.queue.queued+cost, l.capacity))
		l.waiting.Add(-1)
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonQueueFull, ready)
	}
	w := l.queue.push(cost, p.level())
	// The earliest this caller could be served: when the window has room
	// for everything queued ahead of it plus its own cost. Beyond one
	// window's worth it is a lower bound, which is still safe for refusing.
	ready := l.engine.RetryAfter(now, min(l.queue.ahead(w)+cost, l.capacity))
	if deadline, ok := ctx.Deadline(); ok && deadline.Sub(l.epoch) <= now+ready {
		l.queue.remove(w)
		l.waiting.Add(-1)
		l.mu.Unlock()
		l.queue.put(w)
		return Lease{}, l.refuse(cost, telemetry.ReasonDeadline, ready)
	}
	d := time.Duration(0) // not the front: sleep until woken
	if l.queue.front() == w {
		d = max(ready, 1)
	}
	l.mu.Unlock()
	l.metrics.QueueAdd(int64(cost))
	start := now

	for {
		woke := w.sleep(ctx, d)
		l.mu.Lock()
		if w.shed {
			l.mu.Unlock()
			l.queue.put(w)
			l.metrics.QueueAdd(-int64(cost))
			return Lease{}, shedError(l.name, l.metrics, cost)
		}
		if woke == wokenDone || ctx.Err() != nil {
			// Checked after every wake, so a caller whose context has
			// ended never takes permits, even when its timer fired too.
			l.leave(w, false)
			l.mu.Unlock()
			l.queue.put(w)
			l.metrics.QueueAdd(-int64(cost))
			return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
		}
		d = 0
		if l.queue.front() == w {
			now = time.Since(l.epoch)
			ok, retryAfter := l.engine.TryAcquire(now, cost)
			if ok {
				l.leave(w, true)
				l.mu.Unlock()
				l.queue.put(w)
				l.metrics.QueueAdd(-int64(cost))
				l.metrics.Waited(ctx, now-start)
				l.metrics.AcquiredN(cost)
				return spentLease(&l.spent, now, cost), nil
			}
			d = max(retryAfter, 1)
		}
		l.mu.Unlock()
	}
}

// shed is what a waiter shed (waitQueue.shed) leaves: its place among
// those waiting, and if it was the front, the front's timer, which the next
// starts. Called with l.mu held, w still queued.
func (l *perWindow) shed(w *waiter) {
	l.waiting.Add(-1)
	if next := w.next; l.queue.front() == w && next != nil {
		l.queue.wake(next)
	}
}

// leave takes w out of the queue, served or not, and, if that makes a new
// front, wakes it so it starts its own timer. Called with l.mu held.
func (l *perWindow) leave(w *waiter, served bool) {
	wasFront := l.queue.front() == w
	l.queue.leave(w, served)
	l.waiting.Add(-1)
	if f := l.queue.front(); wasFront && f != nil {
		l.queue.wake(f)
	}
}

func (l *perWindow) refuse(cost int, reason string, retryAfter time.Duration) error {
	l.metrics.DeniedN(reason, cost)
	return &RateLimitedError{Limiter: l.name, RetryAfter: max(retryAfter, 0), Reason: reason}
}

// figures reports the window: permits spent within it, and left.
func (l *perWindow) figures(f metrics.Figures) {
	used(f, float64(l.engine.Permits()), float64(l.engine.Available(time.Since(l.epoch))))
}
