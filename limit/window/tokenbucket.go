package window

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// Never is the retryAfter (and readyAt offset) of a request that no wait can
// satisfy: one whose cost is above the bucket's burst.
const Never = time.Duration(math.MaxInt64)

// Bounds that keep every sum of times below 2^63 ns, so that no arithmetic on
// the hot path needs an overflow check: a full bucket spans at most maxSpan,
// a reservation may be booked at most maxSpan ahead, and callers' times stay
// below 2^61 ns (73 years after their epoch).
const (
	maxSpan  = int64(1) << 60 // about 36.5 years
	maxBurst = math.MaxInt32  // a Lease holds its cost in an int32
	maxRate  = 1e9            // one permit a nanosecond: the interval is whole nanoseconds
)

// cacheLine is what keeps the hot word alone: 128 bytes covers the pair of
// lines that x86's adjacent-line prefetcher fetches together.
const cacheLine = 128

// A TokenBucket grants permits at a steady rate with a burst: it holds at
// most Burst permits, starts full, and refills one permit every Interval.
//
// It is a GCRA ("generic cell rate algorithm") bucket: its whole state is one
// atomic word, the theoretical arrival time (TAT) — the time at which the
// bucket would be full again if nothing more were taken — with a count of
// its grants in the word's low bits (see Granted). Taking cost permits
// at now moves TAT to max(TAT, now) + cost·Interval, and is allowed when the
// result is at most now + Burst·Interval. So over any interval of length d,
// the permits granted (counted at the times they became usable) never exceed
// d/Interval + Burst, whatever the order in which concurrent callers' times
// arrive.
//
// Times are time.Duration offsets on the caller's monotonic axis, at or
// after 0 and below 2^61 ns. The bucket reads no clock.
//
// The zero TokenBucket is not usable; call NewTokenBucket. A TokenBucket is
// safe for concurrent use.
type TokenBucket struct {
	interval int64 // nanoseconds per permit; 0 means no limit
	span     int64 // burst·interval: how far TAT may run ahead of now
	burst    int

	// The configuration above is read on every call; keep TAT's writes from
	// invalidating it in other cores' caches.
	_ [cacheLine - 24]byte
	// word is TAT shifted left by grantBits, its low bits counting
	// TryAcquire's permits modulo 1<<grantBits: the compare-and-swap that
	// moves TAT counts the grant too, so a grant costs no atomic
	// operation of its own (see Granted). TAT stays below 2^62 (see the
	// bounds above), so the shift loses nothing.
	word atomic.Uint64
	// carried holds the permits the low bits of word counted before they
	// wrapped, added by the grant that wraps them: one grant of one permit
	// in 1<<grantBits adds to it, on the line the compare-and-swap already
	// holds.
	carried atomic.Int64
	_       [cacheLine - 16]byte

	// turns is TAT as if every caller refused so far had been booked (see
	// NextTurn). Only refusals touch it.
	turns atomic.Int64
	// reported is the highest count Granted has returned (see there).
	reported atomic.Int64
}

// grantBits is how many low bits of a TokenBucket's word count its grants.
// Two are what TAT leaves free; they save three in four grants of one
// permit an atomic add, about 7 ns each on the 2-core VM the benchmarks
// run on.
const (
	grantBits = 2
	grantMask = 1<<grantBits - 1
)

// pack is the word of TAT tat with the grant count bits c.
func pack(tat int64, c uint64) uint64 { return uint64(tat)<<grantBits | c&grantMask }

// tatOf is the TAT that word w holds.
func tatOf(w uint64) int64 { return int64(w >> grantBits) }

// tat is the bucket's TAT now.
func (b *TokenBucket) tat() int64 { return tatOf(b.word.Load()) }

// NewTokenBucket returns a full bucket that refills rate permits a second
// and holds burst permits, or every problem with them at once (each a
// *headroom.ConfigError, joined with errors.Join). The bounds:
//
//   - rate is above 0 and at most 1e9 (one permit a nanosecond), or +Inf
//     for no limit (every TryAcquire of at most burst succeeds); it may be
//     below 1 (0.5 is a permit every 2 s);
//   - burst is 1 to 2^31-1 (a limit.Lease holds its cost in an int32);
//   - a full bucket refills within 2^60 ns, about 36 years: burst ÷ rate
//     is at most that, so that no sum of times on the hot path can
//     overflow.
//
// The interval between permits is 1/rate rounded up to a whole nanosecond,
// so the bucket never grants faster than rate; the rounding is exact when
// rate divides 10^9 and loses less than rate/10^9 of the rate otherwise.
func NewTokenBucket(rate float64, burst int) (*TokenBucket, error) {
	l := problems.New("window")
	if !(rate > 0 && rate <= maxRate || math.IsInf(rate, 1)) {
		l.Add("rate", rate, "above 0 and at most 1e9 permits a second, or +Inf for no limit")
	}
	if burst < 1 || burst > maxBurst {
		l.Add("burst", burst, "1 to 2147483647 permits")
	}
	if l.Len() > 0 {
		return nil, l.Err()
	}
	interval := intervalOf(rate)
	switch {
	case interval > maxSpan:
		l.Add("rate", rate, "at least one permit in 2^60 ns (about 36 years)")
	case interval > maxSpan/int64(burst):
		l.Add("burst", burst, fmt.Sprintf("at most %d at this rate: a full bucket refills within 2^60 ns (about 36 years)", maxSpan/interval))
	}
	if l.Len() > 0 {
		return nil, l.Err()
	}
	return &TokenBucket{burst: burst, interval: interval, span: interval * int64(burst)}, nil
}

// intervalOf is 1/rate in whole nanoseconds, rounded up, so that the bucket
// errs on the side of granting less; 0 for +Inf, and maxSpan+1 for a rate
// too low to count. Division in floating point can land a hair above an
// exact integer (1e9/(1e9/7) is 7.000000000000001); those are rounded to
// the integer rather than up past it. rate is above 0.
func intervalOf(rate float64) int64 {
	if math.IsInf(rate, 1) {
		return 0
	}
	ns := 1e9 / rate
	if ns > float64(maxSpan) {
		return maxSpan + 1
	}
	if r := math.Round(ns); math.Abs(ns-r) <= ns*1e-12 {
		return max(int64(r), 1)
	}
	return max(int64(math.Ceil(ns)), 1)
}

// Interval is the time it takes to refill one permit; 0 means no limit.
func (b *TokenBucket) Interval() time.Duration { return time.Duration(b.interval) }

// Burst is the number of permits the bucket holds when full: the largest
// cost it can ever grant.
func (b *TokenBucket) Burst() int { return b.burst }

// Available is how many whole permits could be taken at now, from 0 to
// Burst; pending reservations count as taken.
func (b *TokenBucket) Available(now time.Duration) int {
	ahead := b.tat() - int64(now)
	if ahead <= 0 || b.interval == 0 {
		return b.burst
	}
	taken := (ahead + b.interval - 1) / b.interval
	return int(max(int64(b.burst)-taken, 0))
}

// TryAcquire takes cost permits at now if they are all free, and reports whether
// it did. A cost of 0 always succeeds and changes nothing.
//
// On refusal it changes nothing, and retryAfter is exact: the same TryAcquire at
// now+retryAfter succeeds if nothing else is taken in between, and at any
// earlier time it would not. A cost below 0 or above Burst never fits: it is
// refused with retryAfter Never.
//
// TryAcquire never succeeds while a reservation made by Reserve is pending (see
// Reserve), so it cannot jump ahead of queued callers.
func (b *TokenBucket) TryAcquire(now time.Duration, cost int) (ok bool, retryAfter time.Duration) {
	if uint(cost) > uint(b.burst) { // below 0 too
		return false, Never
	}
	if cost == 0 {
		return true, 0
	}
	if b.interval == 0 {
		b.carried.Add(int64(cost))
		return true, 0
	}
	need, t := int64(cost)*b.interval, int64(now)
	for {
		w := b.word.Load()
		next := max(tatOf(w), t) + need
		if wait := next - b.span - t; wait > 0 {
			return false, time.Duration(wait)
		}
		counted := w&grantMask + uint64(cost)
		if b.word.CompareAndSwap(w, pack(next, counted)) {
			if wrapped := counted &^ grantMask; wrapped != 0 {
				b.carried.Add(int64(wrapped))
			}
			return true, 0
		}
	}
}

// Granted is how many permits TryAcquire has granted, for telemetry; the
// bookings of Reserve are not counted (their callers count the ones they
// use). Its count is exact once the grants it races with have returned:
// a grant that wraps the word's count adds what wrapped to carried just
// after its compare-and-swap, so a Granted between the two misses those
// permits. Carried is read before the word, so that a race only ever
// misses permits and never counts one twice, and Granted never reports less
// than it has reported before: a counter that stepped back would read as a
// reset.
func (b *TokenBucket) Granted() int64 {
	n := b.carried.Load()
	n += int64(b.word.Load() & grantMask)
	for {
		seen := b.reported.Load()
		if n <= seen || b.reported.CompareAndSwap(seen, n) {
			return max(n, seen)
		}
	}
}

// NextTurn is when a caller that TryAcquire refused at now should come back
// for cost permits, as an offset from now, so that callers refused together
// come back one after another instead of all at the exact retryAfter, where
// one would win and the rest be refused again. Each refusal is given the
// time its permits would be due had it been booked behind every caller
// refused before it, but nothing is booked: a caller that comes back at its
// turn finds its permits free when those refused before it came back at
// theirs and nobody new took permits in between. A turn is never earlier
// than TryAcquire's exact retryAfter. Turns run ahead of the bucket by at most
// the cost of the refusals whose callers have not come back yet, so callers
// that give up inflate the turns of later refusals until that much time has
// passed. A cost above Burst gets Never.
func (b *TokenBucket) NextTurn(now time.Duration, cost int) time.Duration {
	if cost > b.burst {
		return Never
	}
	if cost <= 0 || b.interval == 0 {
		return 0
	}
	need, t := int64(cost)*b.interval, int64(now)
	for {
		turns := b.turns.Load()
		next := max(turns, b.tat(), t) + need
		if b.turns.CompareAndSwap(turns, next) {
			return time.Duration(max(next-b.span-t, 0))
		}
	}
}

// Reserve books cost permits at the earliest time they are free, readyAt, if
// readyAt is at most maxAhead after now; ok reports whether it booked them.
// readyAt is never before now: readyAt == now means the permits are free at
// once (Reserve then acts as TryAcquire). A caller whose readyAt is after now
// must wait until readyAt before it uses the permits; until then the
// reservation is pending, and the caller may give the permits back with
// Cancel. A cost of 0 (or less) books nothing and is ready at now.
//
// When ok is false nothing is booked and readyAt is when the permits would
// have been ready; a cost above Burst is refused with readyAt now+Never
// (saturated). maxAhead is treated as at most 36 years; below 0 it is 0.
//
// Reservations are FIFO by construction. Booking moves TAT forward by
// cost·Interval and readyAt is TAT-Burst·Interval, so each booking's readyAt
// is later than every booking before it that still waits. A pending
// reservation r has TAT ≥ readyAt(r)+Burst·Interval: TAT only grows, except
// by Cancel, which lowers it by exactly what it removes (the cancelled
// reservation's own booking, with the later ones shifted down by the same
// amount). So while r is pending, that is at any now < readyAt(r), a TryAcquire
// of cost c needs TAT+c·Interval-Burst·Interval ≤ now, while the left side is
// at least readyAt(r)+c·Interval > now: it fails. A later Reserve gets a
// readyAt of at least readyAt(r)+c·Interval: it queues behind r.
func (b *TokenBucket) Reserve(now time.Duration, cost int, maxAhead time.Duration) (readyAt time.Duration, ok bool) {
	if cost <= 0 {
		return now, true
	}
	if cost > b.burst {
		return sat(now, Never), false
	}
	if b.interval == 0 {
		return now, true
	}
	ahead := min(max(int64(maxAhead), 0), maxSpan)
	need, t := int64(cost)*b.interval, int64(now)
	for {
		w := b.word.Load()
		next := max(tatOf(w), t) + need
		ready := max(next-b.span, t)
		if ready-t > ahead {
			return time.Duration(ready), false
		}
		if b.word.CompareAndSwap(w, pack(next, w)) {
			return time.Duration(ready), true
		}
	}
}

// Cancel gives back the cost permits of a reservation that is still pending
// at now, and reports whether it did. readyAt is the reservation's current
// readyAt: the one Reserve returned, moved earlier by every shift since.
//
// Giving permits back to the bucket is what keeps a cancelled wait from
// leaking capacity. But it also means that every reservation booked after
// the cancelled one would now be ready shift earlier, and those callers must
// be told: the caller of Cancel moves the readyAt of each reservation booked
// after the cancelled one and still pending earlier by shift (shift is
// cost·Interval). Reservations booked before it are unchanged. Done this way
// the queue keeps its order and its gaps, and nobody arriving later can jump
// ahead of the waiters, because TAT stays at or after the last waiter's
// readyAt+Burst·Interval (see Reserve).
//
// Why a refund cannot let more through than the rate: count each waiter's
// permits as still in the bucket until they are due. Then booking a wait
// changes that count by nothing, the waiter's grant at readyAt takes its
// cost, and Cancel (a refund, and a waiter gone) changes it by nothing; the
// count refills at the rate and, while anyone waits, stays below Burst. It
// is an ordinary token bucket from which permits leave only when they are
// used, so TokenBucket's bound holds with cancellations too.
//
// A reservation that is due (readyAt ≤ now) cannot be cancelled: its time
// has passed and so have its permits, which belong to the caller. Cancel
// then changes nothing and returns false, as it does for a cost of 0.
//
// Cancel trusts its arguments: cancelling a reservation twice, or one that
// was never booked, gives away permits. Callers serialize their bookings that
// wait, their cancellations and the shifts of their waiters under one lock;
// TryAcquire needs no lock.
func (b *TokenBucket) Cancel(now, readyAt time.Duration, cost int) (shift time.Duration, ok bool) {
	if cost <= 0 || readyAt <= now || cost > b.burst {
		return 0, false
	}
	// readyAt > now implies TAT-cost·Interval > now: the bucket is still in
	// debt after the refund, so the subtraction needs no clamp.
	// The subtraction leaves the count bits below TAT as they are.
	shift = time.Duration(int64(cost) * b.interval)
	b.word.Add(-(uint64(shift) << grantBits))
	return shift, true
}

// sat is a+b, saturated at Never.
func sat(a, b time.Duration) time.Duration {
	if s := a + b; s >= a {
		return s
	}
	return Never
}
