package fleet

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// limiter is a shared limiter: permits come from a bucket on Redis, and
// this process's callers queue in FIFO order in front of it.
//
// One round trip is out at a time per limiter. A caller that finds nobody
// queued is the head and asks Redis for its own permits: one round trip
// per acquire. Callers that come while a round trip is out queue behind
// it, and the next head asks for all their permits in one round trip —
// exactly what they want, so nothing is left over — and hands them out in
// order. With Batch above 1 a head with others behind it asks for at least
// Batch, and what is left stays in the pocket for the next callers. A
// refused head either refuses the queue (QueueLimit 0) or sleeps until the
// exact RetryAfter Redis gave, the queue behind it.
type limiter struct {
	name       string
	capacity   int // the largest cost the limit can ever grant
	bucket     bucket
	batch      int
	queueLimit int
	circuit    *circuit
	failOpen   bool
	share      *share
	metrics    *metrics.Fleet
	// grants records what limit's limiters record: leases granted and
	// refused, the queue, the wait and throttles.
	grants *metrics.Limiter
	epoch  time.Time

	mu       sync.Mutex
	pocket   int // permits taken from Redis, not yet handed out
	q        queue
	sleeping bool      // the head waits for permits to free
	wakeAt   time.Time // when it does, when it will look again
}

func (l *limiter) Name() string { return l.name }

func (l *limiter) Acquire(ctx context.Context) (limit.Lease, error) { return l.AcquireN(ctx, 1) }

// AcquireN asks for cost permits: from the pocket when nobody waits, else
// from Redis. See Options for the queue, batching and the failure policy. A
// call whose context has ended takes nothing, even from the pocket
// (limit.ContextEnded).
func (l *limiter) AcquireN(ctx context.Context, cost int) (limit.Lease, error) {
	if ctx.Err() != nil {
		return limit.Lease{}, l.waitEnded(ctx, max(cost, 0))
	}
	if cost < 0 || cost > l.capacity {
		return limit.Lease{}, &limit.CostError{Limiter: l.name, Cost: cost, Capacity: l.capacity}
	}
	if cost == 0 {
		return limit.Lease{}, nil
	}
	if l.circuit.blocked() {
		return l.fallBack(ctx, cost, errCircuitOpen)
	}
	l.mu.Lock()
	if l.q.empty() {
		if l.pocket >= cost {
			l.pocket -= cost
			l.mu.Unlock()
			return l.lease(cost), nil
		}
	} else if l.sleeping && l.q.queued+cost > l.queueLimit {
		wait := time.Until(l.wakeAt)
		l.mu.Unlock()
		return limit.Lease{}, l.refuse(telemetry.ReasonQueueFull, max(wait, 0), cost)
	}
	w := l.q.push(cost, time.Since(l.epoch))
	if w == l.q.front() {
		w.state = leading
	} else {
		w.waited = true
	}
	l.mu.Unlock()
	lease, err := l.await(ctx, w, 0)
	l.mu.Lock()
	l.q.recycle(w)
	l.mu.Unlock()
	return lease, err
}

// await waits in the queue until w is settled, leading the queue when it
// is the head. A head with wait > 0 starts by sleeping that long.
func (l *limiter) await(ctx context.Context, w *waiter, wait time.Duration) (limit.Lease, error) {
	for {
		l.mu.Lock()
		st := w.state
		l.mu.Unlock()
		switch st {
		case granted:
			return l.leaseAt(ctx, w), nil
		case refused:
			return limit.Lease{}, l.refuse(w.reason, w.retryAfter, w.cost)
		case failed:
			return l.fallBack(ctx, w.cost, w.err)
		case leading:
			return l.lead(ctx, w, wait)
		}
		select {
		case <-w.ready:
		case <-ctx.Done():
			l.mu.Lock()
			if w.state != pending {
				l.mu.Unlock()
				continue // settled meanwhile: its permits are taken, use them
			}
			l.q.remove(w)
			l.mu.Unlock()
			return limit.Lease{}, l.waitEnded(ctx, w.cost)
		}
	}
}

// refuse counts a refusal of cost permits and returns it.
func (l *limiter) refuse(reason string, retryAfter time.Duration, cost int) error {
	l.grants.DeniedN(reason, cost)
	return &limit.RateLimitedError{Limiter: l.name, RetryAfter: retryAfter, Reason: reason}
}

// take asks the bucket for permits and tells the circuit how it went.
func (l *limiter) take(ctx context.Context, need, want int) (grant, error) {
	g, err := l.bucket.take(ctx, need, want)
	switch {
	case err == nil:
		l.circuit.succeeded()
		l.share.end()
		l.metrics.Answered(ctx)
	case ended(ctx):
		l.circuit.released()
	default:
		l.circuit.failed()
	}
	return g, err
}

// fallBack decides a request Redis could not: by the failure policy.
func (l *limiter) fallBack(ctx context.Context, cost int, err error) (limit.Lease, error) {
	l.metrics.FellBack(ctx, l.failOpen)
	if !l.failOpen {
		return limit.Lease{}, &UnavailableError{Limiter: l.name, Err: err}
	}
	return l.share.acquire(ctx, l.name, cost)
}

// waitEnded is the error of a caller of cost permits whose context has
// ended (limit.ContextEnded), a deadline's refusal counted.
func (l *limiter) waitEnded(ctx context.Context, cost int) error {
	err := limit.ContextEnded(ctx, l.name)
	if errors.Is(err, limit.ErrRateLimited) {
		l.grants.DeniedN(telemetry.ReasonDeadline, cost)
	}
	return err
}
