package quota

import "time"

// Whether a gradual key's resets hold: whether the server gives nothing
// back before the reset its figures name.
//
// A sliding log's reset is when its oldest unit leaves the window: nothing
// comes back before it, and a refusal naming a reset ahead says the server
// has no room until then, as a Retry-After would. A sliding counter's reset
// is the end of its current window, and the weight of the one before
// decays all along it: units come back well before. The two are told apart
// by what the figures do: a figure that climbs above the one before while
// that one's reset is still ahead shows units given back early, and the
// key's resets are then only bounds. The reset is in whole seconds, rounded
// either way by the dialect: only a climb more than a second before it
// counts.

// earlyReturns is how many figures must climb before their resets for a
// key's resets to be taken as bounds only; the answers' own jitter can
// raise one.
const earlyReturns = 2

// noteClimb takes a figure of remaining read at n, against the figure
// before it and its reset (e.last, e.reset). e.mu is held.
func (e *entry) noteClimb(remaining, n int64) {
	if e.probing || e.assumed || e.figures == 0 {
		return
	}
	if e.reset > n+int64(time.Second) && remaining > e.last+climbSlack(e.limit) {
		e.early++
	}
}

// resetsHold says no figure has shown the key's server giving units back
// before its resets, as a sliding log never does. e.mu is held.
func (e *entry) resetsHold() bool { return e.early < earlyReturns }

// holdToReset takes a refusal of a gradual key that names a reset ahead
// with nothing remaining: where the key's resets hold, the count is empty
// and refills only from that reset, as it would after a Retry-After, which
// Envoy's refusals do not carry. A reset rounded down to whole seconds may
// come up to a second later than named: holding to it is never too long.
// e.mu is held.
func (e *entry) holdToReset(r *reading) {
	if r.success || r.q.Remaining > 0 || r.qr <= r.n || !e.resetsHold() {
		return
	}
	e.remaining, e.fillAt = min(e.remaining, 0), max(e.fillAt, r.qr)
}

// heldWindow is the window a gradual key whose resets hold is paced over,
// when no window is published: the longest time to a reset a success has
// shown. A sliding log gives back, over any window, what was spent in the
// window before; a rate measured from its answers is the rate it was
// spent at, and one spent in bursts gives back bursts, which a client that
// spends them at once meets again a window later with refusals between. So
// it is spent at its limit over its window, evenly. 0 when the key's
// resets have not held, when the server has never shown it holds half its
// limit (a bucket shallower than its limit, whose reset says when it is
// full, refills faster than its limit over that), or when nothing has
// shown the window. e.mu is held.
func (e *entry) heldWindow() int64 {
	if e.window > 0 || !e.continuous || !e.resetsHold() || 2*e.capacity < e.limit {
		return 0
	}
	return e.learned
}
