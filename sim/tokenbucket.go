package sim

import "time"

// tokenBucket is a bucket of Burst units that starts full and refills at
// the quota per window; a request is accepted when the bucket holds its
// units, which it takes. This is x/time/rate's limiter (tollbooth and many
// Go servers are built on it) and, written as a theoretical arrival time,
// GCRA (go-redis/redis_rate): both accept exactly the same requests. Over
// any interval of length t it accepts at most Burst + rate × t units.
//
// It counts exactly, in integers: a unit is worth window nanoseconds of
// "debt", the debt falls by quota every nanosecond (so one unit is repaid
// in window/quota), and the bucket is full when the debt is 0 and empty at
// Burst × window. Its reset is when the debt is 0 again (the bucket full:
// redis_rate's ResetAfter, OpenAI's reset headers), or with
// Server.UnitReset when it holds one unit again; a refused request fits
// when the bucket holds its units. A request larger than the bucket never
// fits. The quota schedule changes the refill rate, never the depth: a
// client that takes a share of the rate leaves the bucket as deep.
type tokenBucket struct {
	window    int64 // ns: a unit's debt
	burst     int
	capacity  int64 // burst × window: the debt of an empty bucket
	unitReset bool
	quota     int64 // units per window: the debt repaid per ns
	debt      int64
	last      time.Duration // when debt was last brought up to date
}

func newTokenBucket(s Server, q int) *tokenBucket {
	burst := s.Burst
	if burst == 0 {
		burst = q
	}
	return &tokenBucket{window: int64(s.Window), burst: burst, capacity: int64(burst) * int64(s.Window),
		unitReset: s.UnitReset, quota: int64(q)}
}

// refill brings the debt down to what it is at now.
func (b *tokenBucket) refill(now time.Duration) {
	elapsed := int64(now - b.last)
	b.last = now
	if elapsed <= 0 || b.quota == 0 {
		return
	}
	if elapsed > b.debt/b.quota { // repaid in full; also keeps elapsed × quota from overflowing
		b.debt = 0
		return
	}
	b.debt = max(b.debt-elapsed*b.quota, 0)
}

func (b *tokenBucket) setQuota(at time.Duration, units int) {
	b.refill(at) // at the old rate until the step
	b.quota = int64(units)
}

// after is when a debt above the bucket's must be repaid from now: the
// instant the debt has fallen by excess.
func (b *tokenBucket) after(now time.Duration, excess int64) time.Duration {
	if excess <= 0 {
		return now
	}
	return now + time.Duration((excess+b.quota-1)/b.quota)
}

func (b *tokenBucket) used(now time.Duration) int {
	b.refill(now)
	return int(b.debt / b.window)
}

func (b *tokenBucket) decide(now time.Duration, units int) decision {
	b.refill(now)
	var d decision
	switch {
	case units > b.burst:
		d.never = true
	case b.debt+int64(units)*b.window <= b.capacity:
		b.debt += int64(units) * b.window
		d.ok = true
	case b.quota == 0:
		d.never = true
	default:
		d.fitsAt = b.after(now, b.debt+int64(units)*b.window-b.capacity)
	}
	d.remaining = int((b.capacity - b.debt) / b.window)
	switch {
	case b.quota == 0:
		d.resetAt = now + time.Duration(b.window) // no refill: say a window, as for a request that never fits
	case b.unitReset:
		d.resetAt = b.after(now, b.debt+b.window-b.capacity)
	default:
		d.resetAt = b.after(now, b.debt)
	}
	return d
}
