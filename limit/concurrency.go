package limit

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit/concurrency"
	"github.com/headroom-go/headroom/telemetry"
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
// Its fast path is lock-free, reads no clock and shares nothing but the
// permit's slot: a lease of one permit is a ticket of the bulkhead's slot
// table (one compare-and-swap to take it, one to give it back, and that one
// also keeps a copy of the lease from freeing it twice), and the bulkhead
// counts its grants for the telemetry itself. Its leases carry no grant
// time (Granted is 0). A lease of several permits takes them anonymously,
// with a record from the pool that keeps its copies one lease. With a
// queue, released permits are handed to the waiters in FIFO order by
// whoever releases them.
type bulkhead struct {
	shell
	engine   *concurrency.Bulkhead
	capacity int // largest cost AcquireN accepts
	// ticketed is the record of every lease of one permit: the slot table.
	ticketed leaseRecord

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
		capacity: o.Concurrency,
		queueing: o.queueLimit() > 0,
		epoch:    time.Now(),
		queue:    waitQueue{limit: o.queueLimit()},
	}
	l.dress(o, metrics.KindConcurrency, l)
	l.ticketed = leaseRecord{owner: &l.self, slots: engine, waiting: &l.waiting}
	l.metrics.CountGrants(func() int64 { return engine.Granted() })
	l.metrics.SetLimit(float64(o.Concurrency))
	sample(l.metrics, l, (*bulkhead).figures)
	return l, nil
}

// Acquire asks for one permit; see AcquireN.
func (l *bulkhead) Acquire(ctx context.Context) (Lease, error) {
	// AcquireN's fast path, repeated: a call through the Limiter interface
	// then returns the lease once instead of copying it through two frames.
	if ctx.Err() == nil && l.waiting.Load() == 0 {
		if t, ok := l.engine.Take(0); ok {
			return Lease{record: &l.ticketed, gen: t, spec: leaseSpec{cost: 1}}, nil
		}
	}
	return l.acquireSlow(ctx, 1)
}

// AcquireN takes cost permits if at most the limit would then be held.
// Without a queue it refuses at once with a *RateLimitedError whose
// RetryAfter is 0: when a holder releases is not the bulkhead's to know.
// With a queue it waits for released permits in order of priority (FIFO
// within a level; see Priority), unless the queue is full
// (telemetry.ReasonQueueFull) of waiters of its priority or above: waiters
// of lower priorities are refused to make room for it, the lowest and
// latest first (telemetry.ReasonShed). When ctx ends while it waits it holds
// nothing (permits handed to it at that same moment are given back to the
// queue) and returns ctx.Err(), or for a deadline a *RateLimitedError
// (telemetry.ReasonDeadline) matching it.
//
// Releasing the lease frees its permits.
func (l *bulkhead) AcquireN(ctx context.Context, cost int) (Lease, error) {
	if cost == 1 && ctx.Err() == nil && l.waiting.Load() == 0 {
		if t, ok := l.engine.Take(0); ok {
			return Lease{record: &l.ticketed, gen: t, spec: leaseSpec{cost: 1}}, nil
		}
	}
	return l.acquireSlow(ctx, cost)
}

// take takes cost permits from the engine for a lease: a ticket for one
// permit, anonymous permits under a pooled record for more.
func (l *bulkhead) take(cost int) (Lease, bool) {
	if cost == 1 {
		t, ok := l.engine.Take(0)
		return Lease{record: &l.ticketed, gen: t, spec: leaseSpec{cost: 1}}, ok
	}
	if ok, _ := l.engine.TryAcquire(0, cost); !ok {
		return Lease{}, false
	}
	l.metrics.CountedMore(cost)
	return newLease(&l.self, 0, cost), true
}

func (l *bulkhead) acquireSlow(ctx context.Context, cost int) (Lease, error) {
	switch {
	case cost < 0 || cost > l.capacity:
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: l.capacity}
	case ctx.Err() != nil:
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	case cost == 0:
		l.metrics.AcquiredN(cost)
		return Lease{}, nil
	case l.waiting.Load() == 0:
		if lease, ok := l.take(cost); ok {
			return lease, nil
		}
	}
	if !l.queueing {
		return Lease{}, l.refuse(cost, telemetry.ReasonNoPermit)
	}
	return l.acquireQueued(ctx, cost)
}

func (l *bulkhead) acquireQueued(ctx context.Context, cost int) (Lease, error) {
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
		if lease, ok := l.take(cost); ok {
			l.waiting.Add(-1)
			l.mu.Unlock()
			return lease, nil
		}
	}
	if !l.queue.shed(cost, p.level(), l.shed) {
		l.waiting.Add(-1)
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonQueueFull)
	}
	w := l.queue.push(cost, p.level())
	l.serve() // a waiter shed may have been a front too large to serve
	l.mu.Unlock()
	l.metrics.QueueAdd(int64(cost))
	start := time.Since(l.epoch)

	if w.sleep(ctx, 0) == wokenReady {
		if w.shed {
			l.queue.put(w)
			l.metrics.QueueAdd(-int64(cost))
			return Lease{}, shedError(l.name, l.metrics, cost)
		}
		// Otherwise only grant signals a bulkhead waiter: the permits are
		// ours.
		lease := w.lease
		l.queue.put(w)
		l.metrics.QueueAdd(-int64(cost))
		l.metrics.Waited(ctx, time.Since(l.epoch)-start)
		return lease, nil
	}
	l.mu.Lock()
	granted, lease := w.granted, w.lease
	if !granted && !w.shed {
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
		lease.Release()
	}
	return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
}

// serve hands permits to the front waiters while they fit; it stops at the
// first that does not, so a large request is not starved by smaller ones
// behind it. Called with l.mu held.
func (l *bulkhead) serve() {
	for w := l.queue.front(); w != nil; w = l.queue.front() {
		lease, ok := l.take(w.cost)
		if !ok {
			return
		}
		w.lease = lease
		l.queue.grant(w)
		l.waiting.Add(-1)
	}
}

// shed is what a waiter shed (waitQueue.shed) leaves: its place among
// those waiting. Called with l.mu held.
func (l *bulkhead) shed(*waiter) { l.waiting.Add(-1) }

// serveLocked serves the queue under l.mu.
func (l *bulkhead) serveLocked() {
	l.mu.Lock()
	l.serve()
	l.mu.Unlock()
}

// release is the rest of a lease's Release once its permits are freed (a
// ticket's by the slot table, the anonymous ones of a larger lease here):
// it counts a throttle and serves the queue.
func (l *bulkhead) release(lease Lease) {
	countThrottle(l.metrics, lease)
	if lease.spec.cost > 1 {
		l.engine.Release(int(lease.spec.cost))
	}
	if l.waiting.Load() > 0 {
		l.serveLocked()
	}
}

// figures reports the slots held and free.
func (l *bulkhead) figures(f metrics.Figures) {
	n := l.engine.InFlight()
	f.Set(metrics.InUse, float64(n))
	f.Set(metrics.Available, float64(l.engine.Limit()-n))
}

func (l *bulkhead) refuse(cost int, reason string) error {
	l.metrics.DeniedN(reason, cost)
	return &RateLimitedError{Limiter: l.name, Reason: reason}
}
