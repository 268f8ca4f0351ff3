package fleet

import (
	"context"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// lease returns a lease of cost permits taken at once, and counts it. The
// permits were spent in Redis when granted, as a token bucket's or a
// window's are, so releasing the lease frees nothing.
func (l *limiter) lease(cost int) limit.Lease {
	l.grants.AcquiredN(cost)
	return limit.NewLease(l, cost, time.Since(l.epoch))
}

// leaseAt is the lease of a queued caller, granted when the head handed it
// its permits, not when its goroutine woke. It counts the lease, and times
// a caller that waited for more than its own round trip to Redis, as
// limit's limiters time a caller that waited for permits.
func (l *limiter) leaseAt(ctx context.Context, w *waiter) limit.Lease {
	l.grants.AcquiredN(w.cost)
	if w.waited {
		l.grants.Waited(ctx, w.grantedAt-w.queuedAt)
	}
	return limit.NewLease(l, w.cost, w.grantedAt)
}

// ReleaseLease is limit.Releaser's: a shared limiter's lease holds nothing;
// a throttle reported on it is counted.
func (l *limiter) ReleaseLease(lease limit.Lease) {
	if lease.Outcome() == adaptive.Throttled {
		l.grants.Throttled()
	}
}
