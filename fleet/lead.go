package fleet

import (
	"context"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// lead runs the queue as its head until w is settled: it sleeps wait first
// (a refusal's RetryAfter), then asks Redis for the permits the queue needs
// and hands them out in order; refused, it refuses the queue or sleeps
// again. A head whose context ends leaves, and the next waiter leads.
func (l *limiter) lead(ctx context.Context, w *waiter, wait time.Duration) (limit.Lease, error) {
	for {
		if wait > 0 {
			if err := l.sleep(ctx, w, wait); err != nil {
				return limit.Lease{}, err
			}
		}
		if ctx.Err() != nil {
			l.leave(w)
			return limit.Lease{}, l.waitEnded(ctx, w.cost)
		}
		if !l.circuit.allow() {
			l.failQueue(errCircuitOpen)
			return l.fallBack(ctx, w.cost, errCircuitOpen)
		}
		l.mu.Lock()
		need, want := w.cost, l.q.queued // the whole queue's demand
		if l.batch > 1 && l.q.behind(w) != nil {
			want = max(want, l.batch) // demand is high: take a batch
		}
		l.mu.Unlock()
		g, err := l.take(ctx, need, want)
		if err != nil && ended(ctx) {
			l.leave(w)
			return limit.Lease{}, l.waitEnded(ctx, w.cost)
		}
		if err != nil {
			l.failQueue(err)
			return l.fallBack(ctx, w.cost, err)
		}
		l.mu.Lock()
		l.pocket += g.n
		l.serve()
		if w.state == granted {
			l.q.promote()
			l.mu.Unlock()
			return l.leaseAt(ctx, w), nil
		}
		if l.queueLimit == 0 {
			l.refuseQueue(telemetry.ReasonNoPermit, g.retryAfter)
			l.mu.Unlock()
			return limit.Lease{}, l.refuse(telemetry.ReasonNoPermit, g.retryAfter, w.cost)
		}
		l.trim(g.retryAfter)
		l.mu.Unlock()
		wait = g.retryAfter
	}
}

// sleep holds the head for wait, the time until the permits it needs are
// free, or refuses at once when its context's deadline comes first.
func (l *limiter) sleep(ctx context.Context, w *waiter, wait time.Duration) error {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
		l.leave(w)
		return l.refuse(telemetry.ReasonDeadline, wait, w.cost)
	}
	l.mu.Lock()
	l.sleeping, l.wakeAt = true, time.Now().Add(wait)
	w.waited = true
	l.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		l.mu.Lock()
		l.sleeping = false
		l.mu.Unlock()
		return nil
	case <-ctx.Done():
		l.leave(w)
		return l.waitEnded(ctx, w.cost)
	}
}

// leave takes the head out of the queue and makes the next waiter head.
func (l *limiter) leave(w *waiter) {
	l.mu.Lock()
	l.q.remove(w)
	l.sleeping = false
	l.q.promote()
	l.mu.Unlock()
}

// serve hands the pocket's permits to the waiters in order, while they
// cover the front one's cost. l.mu is held.
func (l *limiter) serve() {
	now := time.Duration(-1)
	for f := l.q.front(); f != nil && l.pocket >= f.cost; f = l.q.front() {
		if now < 0 {
			now = time.Since(l.epoch)
		}
		l.pocket -= f.cost
		f.grantedAt = now
		l.q.settle(f, granted)
	}
}

// refuseQueue refuses every queued waiter. l.mu is held.
func (l *limiter) refuseQueue(reason string, retryAfter time.Duration) {
	for f := l.q.front(); f != nil; f = l.q.front() {
		f.reason, f.retryAfter = reason, retryAfter
		l.q.settle(f, refused)
	}
}

// trim refuses the waiters beyond QueueLimit's worth of permits, counted
// from the front: callers that queued behind a round trip, not for a wait.
// l.mu is held.
func (l *limiter) trim(retryAfter time.Duration) {
	sum := 0
	for f := l.q.front(); f != nil; {
		next := l.q.behind(f)
		if sum += f.cost; sum > l.queueLimit && f != l.q.front() {
			f.reason, f.retryAfter = telemetry.ReasonQueueFull, retryAfter
			l.q.settle(f, refused)
		}
		f = next
	}
}

// failQueue hands every queued waiter to the failure policy.
func (l *limiter) failQueue(err error) {
	l.mu.Lock()
	for f := l.q.front(); f != nil; f = l.q.front() {
		f.err = err
		l.q.settle(f, failed)
	}
	l.sleeping = false
	l.mu.Unlock()
}
