package limit

import (
	"context"
	"sync"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// Adaptive returns a concurrency limit that finds its own number between
// c.Minimum and c.Maximum, read from latency: a round of calls whose
// fastest is slower than Multiple × what this dependency normally takes
// means a queue downstream, and the limit backs off. The zero
// ConcurrencyConfig is complete (between 4 and 200, starting at 20); set
// Maximum per dependency.
//
// The lease is the measurement: how long it is held is the latency the
// loop reads, so release it when the call ends, and report Drop for a
// timeout or a 503 (a queueing signal) and Ignore for a call that says
// nothing about capacity (see package limit/adaptive for the rules).
func Adaptive(c adaptive.ConcurrencyConfig, opts ...Option) (*AdaptiveLimiter, error) {
	o := Options{Adaptive: &c}
	for _, opt := range opts {
		opt(&o)
	}
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return newAdaptiveLimiter(o)
}

// AdaptiveLimiter is the latency-adaptive concurrency limit. It implements
// Limiter; CurrentLimit and Baseline read its state for a dashboard.
//
// A call is granted when the units in flight plus its cost fit under the
// current limit, or when nothing is in flight: a cost above the current
// limit but within Maximum could otherwise never be granted, since with
// nothing in flight no release comes to move the limit. Such a call holds
// more than the limit, alone, until it is released. Without a queue
// (QueueLimit 0, the default) a call is refused at once otherwise, with a
// *RateLimitedError whose RetryAfter is 0 (when a holder releases is not
// the limiter's to know). With a queue it waits in order of priority (FIFO within a level; see
// Priority); when its
// context ends it holds nothing and returns ctx.Err(), or for a deadline a
// *RateLimitedError (telemetry.ReasonDeadline) matching it.
type AdaptiveLimiter struct {
	shell
	epoch    time.Time
	capacity int // the largest cost: Maximum

	mu     sync.Mutex
	engine *adaptive.Concurrency
	queue  waitQueue
}

// newAdaptiveLimiter builds the limiter of a validated o.
func newAdaptiveLimiter(o Options) (*AdaptiveLimiter, error) {
	engine, err := adaptive.NewConcurrency(*o.Adaptive)
	if err != nil {
		return nil, err
	}
	l := &AdaptiveLimiter{epoch: time.Now(), engine: engine, capacity: engine.Config().Maximum, queue: waitQueue{limit: o.queueLimit()}}
	l.dress(o, metrics.KindAdaptive, l)
	l.metrics.SetLimit(float64(l.engine.Limit()))
	sample(l.metrics, l, (*AdaptiveLimiter).figures)
	return l, nil
}

// CurrentLimit is the limit the loop has settled on, and false until it has
// seen enough calls to have an opinion: 100 successful calls, during which
// it holds at Initial.
func (l *AdaptiveLimiter) CurrentLimit() (int, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.engine.CurrentLimit()
}

// Baseline is what the limiter thinks a fast call takes (the 10th
// percentile of the last five minutes' latencies, under a ceiling that
// rises at most ×2 an hour), and false until 100 successful calls.
func (l *AdaptiveLimiter) Baseline() (time.Duration, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.engine.Baseline()
}

// Acquire asks for one permit; see AcquireN.
func (l *AdaptiveLimiter) Acquire(ctx context.Context) (Lease, error) { return l.AcquireN(ctx, 1) }

// AcquireN takes cost units of the limit. A cost above Maximum, or below
// 0, is refused with a *CostError; one above the current limit waits, or is
// refused, until nothing is in flight (see AdaptiveLimiter).
func (l *AdaptiveLimiter) AcquireN(ctx context.Context, cost int) (Lease, error) {
	if cost < 0 || cost > l.capacity {
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: l.capacity}
	}
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	if cost == 0 {
		l.metrics.AcquiredN(cost)
		return Lease{}, nil
	}
	now := time.Since(l.epoch)
	l.mu.Lock()
	if l.queue.empty() {
		if ok, _ := l.engine.TryAcquire(now, cost); ok {
			l.mu.Unlock()
			l.metrics.AcquiredN(cost)
			return newLease(&l.self, now, cost), nil
		}
	}
	l.engine.Blocked()
	if l.queue.limit == 0 {
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonNoPermit)
	}
	if ctx.Err() != nil {
		l.mu.Unlock()
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	p, err := priorityOf(ctx)
	if err != nil {
		l.mu.Unlock()
		return Lease{}, err
	}
	if !l.queue.shed(cost, p.level(), func(*waiter) {}) {
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonQueueFull)
	}
	w := l.queue.push(cost, p.level())
	l.serve() // a waiter shed may have been a front too large to serve
	l.mu.Unlock()
	l.metrics.QueueAdd(int64(cost))

	woken := w.sleep(ctx, 0)
	l.mu.Lock()
	granted, shed := w.granted, w.shed
	if !granted && !shed {
		l.queue.remove(w)
		l.serve() // w may have been the front holding back smaller waiters
	}
	l.mu.Unlock()
	l.queue.put(w)
	l.metrics.QueueAdd(-int64(cost))
	at := time.Since(l.epoch)
	if granted && woken == wokenReady {
		l.metrics.Waited(ctx, at-now)
		l.metrics.AcquiredN(cost)
		return newLease(&l.self, at, cost), nil
	}
	if granted {
		// The grant and the cancellation raced: the caller gets ctx.Err()
		// as it asked, and the units go to the next in line.
		l.mu.Lock()
		l.engine.Release(at, 0, cost, adaptive.Ignored)
		l.serve()
		l.mu.Unlock()
	}
	if shed && woken == wokenReady {
		return Lease{}, shedError(l.name, l.metrics, cost)
	}
	return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
}

func (l *AdaptiveLimiter) refuse(cost int, reason string) error {
	l.metrics.DeniedN(reason, cost)
	return &RateLimitedError{Limiter: l.name, Reason: reason}
}

// serve grants the front waiters while they fit; it stops at the first
// that does not, so a large request is not starved by smaller ones behind
// it. One above the current limit goes once nothing is in flight (the
// engine's rule), so it cannot hold the queue for ever. Called with l.mu
// held.
func (l *AdaptiveLimiter) serve() {
	for w := l.queue.front(); w != nil; w = l.queue.front() {
		if ok, _ := l.engine.TryAcquire(0, w.cost); !ok {
			return
		}
		l.queue.grant(w)
	}
}

// release frees the lease's units and reports its latency (now − granted)
// and outcome: adaptive.Success samples latency, adaptive.Dropped and adaptive.Throttled are queueing
// signals, adaptive.Ignored teaches nothing.
func (l *AdaptiveLimiter) release(lease Lease) {
	now := time.Since(l.epoch)
	latency, n := now-lease.granted, int(lease.spec.cost)
	countThrottle(l.metrics, lease)
	l.mu.Lock()
	old := l.engine.Limit()
	changed := l.engine.Release(now, latency, n, lease.spec.outcome())
	if !l.queue.empty() {
		l.serve()
	}
	if changed {
		// An atomic store, under the lock so that racing changes record
		// in order.
		l.metrics.SetLimit(float64(l.engine.Limit()))
		if l.engine.Limit() < old {
			l.metrics.Cut()
		}
	}
	l.mu.Unlock()
}

// figures reports the units held and free under the limit, the latency
// baseline once there is one, and the latest round's fastest call.
func (l *AdaptiveLimiter) figures(f metrics.Figures) {
	l.mu.Lock()
	inFlight, limit := l.engine.InFlight(), l.engine.Limit()
	base, known := l.engine.Baseline()
	round, done := l.engine.LastRound()
	l.mu.Unlock()
	used(f, float64(limit), float64(limit-inFlight))
	if known {
		f.SetDuration(metrics.LatencyBaseline, base)
	}
	if done {
		f.SetDuration(metrics.LatencyRound, round)
	}
}
