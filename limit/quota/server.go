package quota

import (
	"cmp"
	"time"
)

// refillPerNs is how fast a gradual key's units come back, units a
// nanosecond: Limit over the window the headers publish; else, for a key
// that refills continuously (a bucket, a sliding counter), the rate the
// figures have shown (refill.go); else Limit over the documented or learned
// window (a sliding log gives back what was spent a window ago: over a
// window, the limit), or the rate shown when no window is known. 0 when
// nothing says.
func (e *entry) refillPerNs(n int64) float64 {
	if e.limit <= 0 {
		return 0
	}
	if e.window > 0 && !e.documented {
		return float64(e.limit) / float64(e.window)
	}
	if w := e.heldWindow(); w > 0 {
		return float64(e.limit) / float64(w)
	}
	if r := e.rate.perNs(); r > 0 && (e.continuous || e.limitWindow() == 0) {
		if w := e.limitWindow(); w > 0 && 2*e.capacity >= e.limit && n-e.cutAt > int64(refillFade) {
			// A rate learned while no throttle said it was too high
			// measures what was spent, no more (a sliding log gives back
			// what left its window): a server that holds its limit gives
			// it back within the window its resets have shown.
			r = max(r, float64(e.limit)/float64(w))
		}
		return r
	}
	if w := e.limitWindow(); w > 0 {
		held := e.limit
		if e.continuous && e.capacity > 0 {
			// A bucket refills what it holds, not its limit, within the
			// longest reset it has shown ("until full").
			held = min(held, e.capacity)
		}
		return float64(held) / float64(w)
	}
	return 0
}

// limitWindow is the window of the key's limit: the published one; else
// the documented one, unless the resets have shown it shorter; else the
// longest time to a reset a success has shown. 0 when nothing says.
func (e *entry) limitWindow() int64 {
	w := cmp.Or(e.window, e.learned)
	if e.documented && e.bound > 0 {
		// The documented window is a guess; the resets bound the truth.
		w = min(w, max(e.bound, e.learned))
	}
	if e.subSecond() {
		// The resets bound the window, see subsecond.go.
		w = min(w, e.sub.longest)
	}
	return w
}

// countsOwnSince reports whether the server's count under q (its limit less
// what remains) is the units this client sent up to the attempt adm: a
// window that began with the client's first attempt and holds nothing
// else. A bucket refilled meanwhile, or a window others share, does not.
func (e *entry) countsOwnSince(q *Quota, adm admission) bool {
	if adm.upTo == 0 || q.Limit <= 0 {
		return false
	}
	d := q.Limit - q.Remaining - (adm.upTo - e.openerUnits)
	return max(d, -d) <= max(climbSlack(q.Limit), q.Limit/10)
}

// sharedFor is how long a sign of another client on the quota lasts.
const sharedFor = int64(5 * time.Minute)

// aloneAfter is how many answers in a row within a fixed window must show
// the server counting nothing but this client's attempts before the reserve
// kept for others is lent. (Elsewhere another client's spending looks like
// a slower refill, and a reserve there is kept once, not each window.)
const aloneAfter = 16

// othersSpend says another client has been seen spending the key's quota
// within sharedFor of n. e.mu is held.
func (e *entry) othersSpend(n int64) bool { return e.sharedAt != 0 && n-e.sharedAt < sharedFor }

// shallow says the server holds far less than its limit: one that
// publishes on every response and has never shown half its limit left is a
// bucket whose depth is not its limit (a burst of 20 under 3,000 a minute).
// e.mu is held.
func (e *entry) shallow() bool {
	return !e.quiet && e.figures >= shallowAfter && e.limit > 0 && 2*e.capacity < e.limit
}

// shallowAfter is how many figures a key shows before it can be shallow.
const shallowAfter = 8

// oneWay is the shortest leg between the client and the server as far as
// the round trips seen tell: half the shortest. e.mu is held.
func (e *entry) oneWay() int64 { return e.minRTT / 2 }

// climbSlack is how far a figure may rise above the lowest of its window
// before it shows units given back: answers overtake one another on the
// network, and one sent later may have been counted first.
func climbSlack(limit int64) int64 { return max(3, limit/20) }

// showsRefill reports whether a figure of remaining units with the reset qr
// (0: none ahead), read at n, shows a server that gives units back
// continuously rather than at its resets: a window neither moves its reset
// later as its remaining falls (a bucket's "until full" does) nor gives
// units back before its reset (a sliding counter does, and a bucket whose
// reset rounds to now). A figure may rise by climbSlack without showing it:
// answers overtake one another. e.mu is held.
func (e *entry) showsRefill(remaining, qr, n int64) bool {
	if e.probing || e.assumed {
		return false
	}
	held := e.reset > n
	return !held && e.reset == 0 && qr == 0 && remaining > e.floor+climbSlack(e.limit)
}

// windowOfLimit is the time the key takes to give its limit back: for a
// gradual key at the rate it refills, else the published or documented
// window, else the learned one; 0 when nothing says.
func (e *entry) windowOfLimit(n int64) time.Duration {
	if w := e.heldWindow(); w > 0 {
		return time.Duration(w)
	}
	if r := e.rate.perNs(); e.gradual && e.continuous && r > 0 && (e.window == 0 || e.documented) {
		// A rate learned from the client's own spending, with no window
		// published or documented: the pacer is given room above it,
		// and the guard paces by its count.
		w := time.Duration(float64(e.limit) / (pacerRoom * r))
		if lw, held := e.limitWindow(), min(e.limit, e.capacity); lw > 0 && held > 0 && n-e.cutAt > int64(refillFade) {
			// A rate learned while the server kept room measures only
			// what was spent (a sliding log gives back what left its
			// window): the resets bound the window, and what the server
			// holds comes back within it.
			w = min(w, time.Duration(float64(e.limit)*float64(lw)/float64(held)))
		}
		return w
	}
	if e.gradual && e.continuous && e.window > 0 && !e.documented && 2*e.capacity >= e.limit && e.untilFull() {
		// A bucket as deep as its limit may be spent at once: the pacer
		// is given room above its rate, and the guard paces by its count
		// once it runs dry.
		return time.Duration(e.window / pacerRoom)
	}
	if e.subSecondUnsure() {
		return 0
	}
	return time.Duration(e.limitWindow())
}

// untilFull says the resets have been a bucket's: when it is full again.
func (e *entry) untilFull() bool {
	return e.fillFits >= untilFullAfter && 20*e.fillMisfits <= e.fillFits
}

// untilFullAfter is how many figures must fit a bucket's reset first.
const untilFullAfter = 16

// pacerRoom is how far above a learned refill rate a pacer may go.
const pacerRoom = 2
