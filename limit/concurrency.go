package limit

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit/concurrency"
)

// Concurrency returns a bulkhead that lets at most permits permits be held
// at once, whatever their rate.
func Concurrency(permits int, opts ...Option) (Limiter, error) {
	if permits == 0 {
		// 0 would read as "no shape"; say what is wrong with it instead.
		l := problems.New("limit")
		l.Add("Concurrency", 0, "1 or more")
		return nil, l.Err()
	}
	return build(Options{Concurrency: permits}, opts)
}

// bulkhead is the blocking shell around concurrency.Bulkhead.
//
// Its fast path is lock-free and reads no clock: a compare-and-swap to take
// the permits and an atomic add to give them back. Its leases therefore
// carry no grant time (Granted is 0). With a queue, released permits are
// handed to the waiters in FIFO order by whoever releases them.
type bulkhead struct {
	shell
	engine   *concurrency.Bulkhead
	capacity int // largest cost AcquireN accepts

	queueing bool
	// waiting counts callers that have queued or are about to: a caller
	// raises it before it last looks at the engine, and a releaser reads it
	// after giving permits back, so a release can never miss a caller that
	// found the bulkhead full. While it is above 0 nobody takes the fast
	// path, which is what keeps the queue FIFO.
	waiting atomic.Int64
	epoch   time.Time  // for the wait telemetry only
	mu      sync.Mutex // guards queue
	queue   waitQueue
}

// newConcurrency builds the Concurrency shape of a validated o.
func newConcurrency(o Options) (*bulkhead, error) {
	engine, err := concurrency.New(o.Concurrency)
	if err != nil {
		return nil, err
	}
	l := &bulkhead{
		engine:   engine,
		capacity: min(o.Concurrency, math.MaxInt32), // a Lease holds an int32 cost
		queueing: o.queueLimit() > 0,
		epoch:    time.Now(),
		queue:    waitQueue{limit: o.queueLimit()},
	}
	l.dress(o, metrics.KindConcurrency, l)
	l.metrics.SetLimit(float64(o.Concurrency))
	sample(l.metrics, l, (*bulkhead).figures)
	return l, nil
}

// Acquire asks for one permit; see AcquireN.
func (l *bulkhead) Acquire(ctx context.Context) (Lease, error) {
	// AcquireN's fast path, repeated: a call through the Limiter interface
	// then returns the lease once instead of copying it through two frames.
	if l.waiting.Load() == 0 && l.take(1) {
		l.metrics.Acquired()
		return newLease(&l.self, 0, 1), nil
	}
	return l.acquireSlow(ctx, 1)
}

// AcquireN takes cost permits if at most the limit would then be held.
// Without a queue it refuses at once with a *RateLimitedError whose
// RetryAfter is 0: when a holder releases is not the bulkhead's to know.
// With a queue it waits in FIFO order for released permits, unless the
// queue is full (ReasonQueueFull). When ctx ends while it waits it holds
// nothing (permits handed to it at that same moment are given back to the
// queue) and returns ctx.Err(), or for a deadline a *RateLimitedError
// (ReasonDeadline) matching it.
//
// Releasing the lease frees its permits.
func (l *bulkhead) AcquireN(ctx context.Context, cost int) (Lease, error) {
	// The fast path holds only what a grant needs — a cost in [1, capacity],
	// nobody queued (always so without a queue), room in the engine — so
	// its frame stays small; everything else is out of line.
	if uint(cost-1) < uint(l.capacity) && l.waiting.Load() == 0 && l.take(cost) {
		l.metrics.AcquiredN(cost)
		return newLease(&l.self, 0, cost), nil
	}
	return l.acquireSlow(ctx, cost)
}

// take is the engine's TryAcquire verdict alone: a bulkhead reads no clock
// and names no wait.
func (l *bulkhead) take(cost int) bool {
	ok, _ := l.engine.TryAcquire(0, cost)
	return ok
}

func (l *bulkhead) acquireSlow(ctx context.Context, cost int) (Lease, error) {
	switch {
	case cost < 0 || cost > l.capacity:
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: l.capacity}
	case cost == 0:
		l.metrics.AcquiredN(cost)
		return Lease{}, nil
	case !l.queueing:
		return Lease{}, l.refuse(cost, ReasonNoPermit)
	}
	return l.acquireQueued(ctx, cost)
}

func (l *bulkhead) acquireQueued(ctx context.Context, cost int) (Lease, error) {
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	l.waiting.Add(1)
	l.mu.Lock()
	if l.queue.empty() && l.take(cost) {
		l.waiting.Add(-1)
		l.mu.Unlock()
		l.metrics.AcquiredN(cost)
		return newLease(&l.self, 0, cost), nil
	}
	if !l.queue.fits(cost) {
		l.waiting.Add(-1)
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, ReasonQueueFull)
	}
	w := l.queue.push(cost)
	l.mu.Unlock()
	l.metrics.QueueAdd(int64(cost))
	start := time.Since(l.epoch)

	if w.sleep(ctx, 0) == wokenReady {
		// Only grant signals a bulkhead waiter: the permits are ours.
		l.queue.put(w)
		l.metrics.QueueAdd(-int64(cost))
		l.metrics.Waited(time.Since(l.epoch) - start)
		l.metrics.AcquiredN(cost)
		return newLease(&l.self, 0, cost), nil
	}
	l.mu.Lock()
	granted := w.granted
	if !granted {
		l.queue.remove(w)
		l.waiting.Add(-1)
		// w may have been the front holding back smaller waiters.
		l.serve()
	}
	l.mu.Unlock()
	l.queue.put(w)
	l.metrics.QueueAdd(-int64(cost))
	if granted {
		// The grant and the cancellation raced: the caller gets ctx.Err()
		// as it asked, and the permits go to the next in line.
		l.engine.Release(cost)
		l.serveLocked()
	}
	return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
}

// serve hands permits to the front waiters while they fit; it stops at the
// first that does not, so a large request is not starved by smaller ones
// behind it. Called with l.mu held.
func (l *bulkhead) serve() {
	for w := l.queue.front(); w != nil; w = l.queue.front() {
		if !l.take(w.cost) {
			return
		}
		l.queue.grant(w)
		l.waiting.Add(-1)
	}
}

// serveLocked serves the queue under l.mu.
func (l *bulkhead) serveLocked() {
	l.mu.Lock()
	l.serve()
	l.mu.Unlock()
}

func (l *bulkhead) release(lease Lease) {
	countThrottle(l.metrics, lease)
	l.engine.Release(int(lease.spec.cost))
	if l.waiting.Load() > 0 {
		l.serveLocked()
	}
}

// figures reports the slots held and free.
func (l *bulkhead) figures(f metrics.Figures) {
	f.Set(metrics.InUse, float64(l.engine.InFlight()))
	f.Set(metrics.Available, float64(l.engine.Available()))
}

func (l *bulkhead) refuse(cost int, reason string) error {
	l.metrics.DeniedN(reason, cost)
	return &RateLimitedError{Limiter: l.name, Reason: reason}
}
