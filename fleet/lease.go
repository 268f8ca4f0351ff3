package fleet

import (
	"time"

	"github.com/headroom-go/headroom/limit"
)

// lease returns a lease of cost permits. The permits were spent in Redis
// when granted, as a token bucket's or a window's are, so releasing the
// lease frees nothing: ReleaseLease has nothing to do.
func (l *limiter) lease(cost int) limit.Lease {
	return limit.NewLease(l, cost, time.Since(l.epoch))
}

// leaseAt is lease for permits handed out at at, on the limiter's clock:
// a queued caller's lease is granted when the head handed it its permits,
// not when its goroutine woke.
func (l *limiter) leaseAt(cost int, at time.Duration) limit.Lease {
	return limit.NewLease(l, cost, at)
}

// ReleaseLease is limit.Releaser's: a shared limiter's lease holds nothing.
func (l *limiter) ReleaseLease(limit.Lease) {}
