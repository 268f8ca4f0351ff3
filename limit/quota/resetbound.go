package quota

import "time"

// A reset in whole seconds bounds the truth.
//
// Bare draft-03 fields give the reset as delay-seconds, rounded up: a
// figure that says k, written when its response left the server (after
// its attempt went out and a leg before its answer came), says the window
// ends after the attempt went out plus a leg plus k less a second, and no
// later than the answer less a leg plus k. The figures of one window
// narrow that down: near its end, to the spacing of the attempts, where
// the reset held from the first figure (from 80% of the limit used) may be
// a second late. Once the figures of a window bound its end, the next
// attempt may go when the end less a leg has come, and arrives after it.
// Only a reset that falls with elapsed time is a window's end: the
// figures must have shown it fall by resetFalls and never disagree. A
// reset that moves as the figures come (a bucket's "until full" moves
// later as it is spent, a sliding log's as its oldest units leave) bounds
// nothing, and the held reset stands.

// resetBoundedUpTo is the longest window whose reset is bounded: a reset
// rounded up to the second holds a window of W up to 1/W of its length
// too long, which over a window longer than this costs less than 5%, and
// a sliding log of a minute, whose oldest unit's departure the reset
// names, gives back one unit there, not a window's.
const resetBoundedUpTo = int64(20 * time.Second)

// resetFalls is how far the figures of one window must show its reset
// fall: two whole seconds, more than rounding.
const resetFalls = int64(2 * time.Second)

// resetBounds bound the held reset (reset) as the figures of its window
// tell it: lo and hi, hi -1 once they disagree; fell is the first
// figure's time to the reset, negated, and 1 once a later one showed it
// fall by resetFalls.
type resetBounds struct {
	lo, hi, reset, fell int64
}

// boundReset narrows the end of the held window by the figures r shows.
// e.mu is held.
func (e *entry) boundReset(r *reading) {
	b := &e.bounds
	if b.reset != e.reset {
		// Another reset is held: the bounds were its window's.
		*b = resetBounds{reset: e.reset}
	}
	if !e.documented || e.limitWindow() > resetBoundedUpTo || r.qr == 0 || r.sent == 0 || !r.success || b.hi < 0 || e.gradual || e.sub.longest <= sameWindow {
		return
	}
	leg := e.oneWay()
	if k := r.qr - r.n; b.fell == 0 {
		b.fell = -k // the first figure's
	} else if b.fell < 0 && -b.fell-k >= resetFalls {
		b.fell = 1
	}
	lo := r.sent + leg + (r.qr - r.n) - int64(time.Second)
	hi := r.qr - leg
	b.lo = max(b.lo, lo)
	if b.hi == 0 || hi < b.hi {
		b.hi = hi
	}
	if b.lo > b.hi {
		b.hi = -1 // figures that disagree: no single end
	}
}

// boundedReset brings the held reset forward to when the window's figures
// bound its end by, less a leg, once that has come. e.mu is held.
func (e *entry) boundedReset(n int64) {
	b := &e.bounds
	if b.hi > 0 && b.fell > 0 && e.reset > n && e.reset == b.reset && !e.gradual && !e.assumed {
		// A whole second rounded up is all the figures may take back.
		if at := b.hi - e.oneWay(); at <= n && e.reset-at <= int64(time.Second)+2*e.oneWay() {
			e.reset = at
		}
	}
}
