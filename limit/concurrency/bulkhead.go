package concurrency

import (
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// A Bulkhead lets at most Limit permits be held at once. Acquiring and
// releasing are lock-free: a compare-and-swap on the in-flight count, and an
// atomic add. It is safe for concurrent use.
//
// The limit may change while permits are held (SetLimit): lowering it below
// the in-flight count revokes nothing, it only refuses new permits until
// enough have been released.
type Bulkhead struct {
	inFlight atomic.Int64
	limit    atomic.Int64
}

// New returns a bulkhead that lets limit permits be held at once, or a
// *headroom.ConfigError for a limit below 0. The bounds: limit is 0 or more;
// 0 refuses every permit until SetLimit raises it.
func New(limit int) (*Bulkhead, error) {
	if limit < 0 {
		l := problems.New("concurrency")
		l.Add("limit", limit, "0 or more permits")
		return nil, l.Err()
	}
	b := &Bulkhead{}
	b.limit.Store(int64(limit))
	return b, nil
}

// TryAcquire takes cost permits when in-flight+cost stays within the limit,
// and reports whether it did. A cost of 0 always succeeds and takes nothing;
// a negative cost never does. It takes now as every engine does, and needs
// it not: permits come back on Release, not with time, so a refusal's
// retryAfter is 0 (when a holder releases is not the bulkhead's to know).
func (b *Bulkhead) TryAcquire(now time.Duration, cost int) (ok bool, retryAfter time.Duration) {
	c := int64(cost)
	if c < 0 {
		return false, 0
	}
	for {
		// c > limit-n rather than n+c > limit, which wraps for a huge c.
		// (limit-n wraps only for a huge limit and an n below 0, which an
		// over-Release leaves for a moment; it then refuses.)
		n := b.inFlight.Load()
		if c > b.limit.Load()-n {
			return false, 0
		}
		if b.inFlight.CompareAndSwap(n, n+c) {
			return true, 0
		}
	}
}

// Release gives back cost permits taken by a successful TryAcquire. Every
// permit must be released once: releasing what was never taken would let the
// bulkhead admit more than its limit. Release never takes the in-flight
// count below 0.
func (b *Bulkhead) Release(cost int) {
	c := int64(cost)
	if c <= 0 {
		return
	}
	if b.inFlight.Add(-c) >= 0 {
		return
	}
	// Released more than was held: put the count back to 0 rather than
	// let a negative count admit permits beyond the limit later.
	for {
		n := b.inFlight.Load()
		if n >= 0 || b.inFlight.CompareAndSwap(n, 0) {
			return
		}
	}
}

// SetLimit changes the limit; a value below 0 is taken as 0. Permits already
// held stay held. A shell with queued callers should try to serve them after
// raising the limit, since no release will tell it there is room.
func (b *Bulkhead) SetLimit(limit int) { b.limit.Store(int64(max(limit, 0))) }

// Limit is the current limit.
func (b *Bulkhead) Limit() int { return int(b.limit.Load()) }

// InFlight is how many permits are held now.
func (b *Bulkhead) InFlight() int { return int(b.inFlight.Load()) }

// Available is how many permits could be taken now; 0 when the in-flight
// count is at or above a lowered limit.
func (b *Bulkhead) Available() int { return int(max(b.limit.Load()-b.inFlight.Load(), 0)) }
