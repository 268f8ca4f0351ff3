package window

import (
	"fmt"
	"sync"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// A SlidingWindow grants at most Permits permits in any interval of length
// Window. It is the engine of limit.PerWindow and of the simulator: every
// method takes the current time as now, an offset on the caller's monotonic
// axis (for example time.Since(epoch)), and it never reads a clock, sleeps or
// starts a goroutine. It is safe for concurrent use.
//
// # The guarantee
//
// A permit taken at t is free again no earlier than t+Window, so every
// half-open interval [s, s+Window) holds at most Permits granted permits,
// whatever its alignment. A published "1000 per minute" quota is never
// exceeded, not even across the boundary of two fixed windows.
//
// # How it slides
//
// The time axis is cut into segments of Window/Segments (rounded up to the
// nanosecond). A ring of Segments+1 slots holds, for each recent segment,
// how many permits were granted in it and when the last of them was granted.
// A slot's count expires as a whole at lastGrant+Window: every grant it
// counts happened at or before lastGrant, so none is freed early. The extra
// slot is what makes reuse safe: when segment k+Segments+1 starts, segment
// k's last grant is at least Window old, so its slot is already empty.
// Memory is O(Segments) whatever the rate.
//
// Plain rotation of Segments counters cannot give both strictness and full
// use: freeing a segment's count when the segment leaves the window admits up
// to twice Permits over some interval of length Window, and keeping it one
// segment longer wastes a segment in every window. Expiring at the last grant
// wastes at most the spread of grants inside one segment.
//
// # Utilisation
//
// A permit is free again at most Window+Window/Segments after it was granted,
// so a caller that always has demand gets at least Segments/(Segments+1) of
// Permits per Window (88.9% with 8 segments). In practice it is close to all
// of it: permits freed together are taken again together, land in the same
// slot and expire together exactly Window later.
//
// # Time
//
// now must not go backwards. A now earlier than one already seen is taken as
// the latest time seen (concurrent callers read the clock before they take
// the lock, so their times may arrive slightly out of order); the permits
// are then counted from that later time, which only delays their expiry.
//
// Any window up to Never works, and so does any Permits: expiry times
// saturate at Never instead of wrapping round into the past, so a window of
// Never grants its permits once and never again.
type SlidingWindow struct {
	mu      sync.Mutex
	permits int64
	window  time.Duration
	segment time.Duration // length of one segment
	slots   []windowSlot  // one per segment and one more; segment k's is slots[k%len(slots)]
	total   int64         // permits counted in slots, not yet expired
	oldest  int64         // segment number of the oldest slot that may count permits
	newest  int64         // segment number of the newest grant
	latest  time.Duration // the latest now seen by a method that expires counts
}

type windowSlot struct {
	count int64
	last  time.Duration // time of the last grant counted in this slot
}

// NewSlidingWindow returns a sliding window of permits per window, sliding
// in segments steps, or every problem with them at once (each a
// *headroom.ConfigError, joined with errors.Join). The bounds: permits is
// 1 or more; window is above 0 (up to Never); segments is 1 or more and
// at most one a nanosecond of window. The window keeps segments+1 slots
// of 16 bytes: it is segments, not permits or window, that costs memory.
func NewSlidingWindow(permits int, window time.Duration, segments int) (*SlidingWindow, error) {
	l := problems.New("window")
	if permits < 1 {
		l.Add("permits", permits, "1 or more")
	}
	if window <= 0 {
		l.Add("window", window, "a duration above 0")
	}
	switch {
	case segments < 1:
		l.Add("segments", segments, "1 or more")
	case window > 0 && int64(segments) > int64(window):
		l.Add("segments", segments, fmt.Sprintf("at most one a nanosecond of the window (%d)", int64(window)))
	}
	if err := l.Err(); err != nil {
		return nil, err
	}
	return &SlidingWindow{
		permits: int64(permits),
		window:  window,
		segment: ceilDiv(window, time.Duration(segments)),
		slots:   make([]windowSlot, segments+1),
	}, nil
}

// TryAcquire takes cost permits at now when the window has room for them,
// and reports whether it did. The permits are counted at now, or at the
// latest time seen when now is earlier (see Time).
//
// On refusal it takes nothing and reports retryAfter, the exact time from
// now until enough counted permits expire for cost to fit, were nothing
// else taken meanwhile. A cost of 0 is always granted and changes nothing.
// A cost below 0 or above Permits never fits: it is refused with
// retryAfter Never.
func (w *SlidingWindow) TryAcquire(now time.Duration, cost int) (ok bool, retryAfter time.Duration) {
	ok, _, retryAfter = w.take(now, cost)
	return ok, retryAfter
}

// take is TryAcquire that also says at which time the permits are
// counted.
func (w *SlidingWindow) take(now time.Duration, cost int) (ok bool, at, retryAfter time.Duration) {
	if cost < 0 || int64(cost) > w.permits {
		return false, now, Never
	}
	w.mu.Lock()
	at = w.advance(now)
	if cost == 0 {
		w.mu.Unlock()
		return true, at, 0
	}
	// total ≤ permits, so permits-total cannot wrap where total+c could.
	c := int64(cost)
	if need := c - (w.permits - w.total); need > 0 {
		retryAfter = w.untilFree(need, now)
		w.mu.Unlock()
		return false, at, retryAfter
	}
	k := int64(at / w.segment)
	if w.total == 0 {
		w.oldest = k
	}
	s := &w.slots[k%int64(len(w.slots))]
	// A slot reused for a newer segment was emptied by advance: its last
	// grant is at least Window old (see the type's doc). Were it not, adding
	// to it would still only delay its old permits, never free them early.
	w.newest = k
	s.count += c
	s.last = at
	w.total += c
	w.mu.Unlock()
	return true, at, 0
}

// RetryAfter is how long from now until cost permits would fit: 0 when they
// fit now, Never when cost is below 0 or above Permits. It takes nothing.
// A blocking shell's head-of-line waiter sleeps this long; while nobody else
// takes permits, TryAcquire succeeds once it has passed.
func (w *SlidingWindow) RetryAfter(now time.Duration, cost int) time.Duration {
	if cost < 0 || int64(cost) > w.permits {
		return Never
	}
	w.mu.Lock()
	w.advance(now)
	var d time.Duration
	if need := int64(cost) - (w.permits - w.total); need > 0 {
		d = w.untilFree(need, now)
	}
	w.mu.Unlock()
	return d
}

// Permits is how many permits the window grants in any interval of its
// length.
func (w *SlidingWindow) Permits() int { return int(w.permits) }

// Available is how many permits could be taken at now.
func (w *SlidingWindow) Available(now time.Duration) int {
	w.mu.Lock()
	w.advance(now)
	n := w.permits - w.total
	w.mu.Unlock()
	return int(n)
}

// advance clamps now to the latest time seen and expires every slot whose
// last grant is at least Window before it. Slots expire in segment order,
// because a later segment's last grant is later, so the scan stops at the
// first slot still live; it visits at most Segments+1 slots.
func (w *SlidingWindow) advance(now time.Duration) time.Duration {
	if now < w.latest {
		now = w.latest
	}
	w.latest = now
	n := int64(len(w.slots))
	for w.total > 0 && w.oldest <= w.newest {
		s := &w.slots[w.oldest%n]
		if s.count > 0 {
			// now ≥ latest ≥ s.last ≥ 0: the difference cannot wrap,
			// where s.last+Window would for a window near Never.
			if now-s.last < w.window {
				break
			}
			w.total -= s.count
			s.count = 0
		}
		w.oldest++
	}
	return now
}

// untilFree is the time from now until need counted permits have expired,
// oldest first, saturated at Never. need must be in (0, total].
func (w *SlidingWindow) untilFree(need int64, now time.Duration) time.Duration {
	n := int64(len(w.slots))
	var freed int64
	for k := w.oldest; k <= w.newest; k++ {
		s := &w.slots[k%n]
		freed += s.count
		if s.count > 0 && freed >= need {
			return until(sat(s.last, w.window), now)
		}
	}
	return 0 // unreachable while need ≤ total
}

// ceilDiv is a/b rounded up, for a ≥ 0 and b > 0, without the overflow of
// (a+b-1)/b near Never.
func ceilDiv(a, b time.Duration) time.Duration {
	q := a / b
	if q*b < a {
		q++
	}
	return q
}

// until is t−now saturated at Never, for t ≥ 0: the caller's own now may be
// below 0 (only its clamped copy is not).
func until(t, now time.Duration) time.Duration {
	d := t - now
	if now < 0 && d < t {
		return Never
	}
	return d
}
