package quota

import (
	"cmp"
	"math"
	"time"
)

// sameWindow is how far two published resets may differ and still name one
// window.
const sameWindow = int64(time.Second)

// admit decides one attempt of cost (≥ 1) units and priority level
// (priority.go) at n: 0 and the units taken, or the wait. e.mu is held.
//
// The first attempt to a key the guard has heard nothing from goes alone,
// and the others wait for its answer (at most AssumedReset, then another
// goes): a client that starts with many callers at once learns the quota
// from the first response before it spends the quota, where otherwise all
// its callers' first attempts would be out before any answer came.
func (e *entry) admit(n, cost int64, level int, c *config) time.Duration {
	if e.blocked > n {
		return clampWait(time.Duration(e.blocked-n), c.maxRetryAfter)
	}
	if !e.contacted {
		if n < e.probeAt {
			return clampWait(time.Duration(e.probeAt-n), c.maxRetryAfter)
		}
		e.probeAt, e.probeSent = n+int64(c.assumedReset), n
		return 0
	}
	stale := n-e.touched.Load() > int64(c.ttl)
	if !e.known && e.silentCapped && !stale {
		// Silence below a publishing threshold, see silence.
		late := e.silentAt + max(e.learned, e.minRTT)
		if e.silentRoom >= cost || e.units == e.answeredUnits || n >= late {
			e.silentRoom -= cost
			return 0
		}
		return clampWait(time.Duration(min(late-n, max(e.minRTT, int64(time.Millisecond)))), c.maxRetryAfter)
	}
	if !e.known || stale || e.roomless() {
		return 0 // nothing published, or stale: treated as reset
	}
	if r := e.refillPerNs(n); e.gradual && r > 0 {
		if d := e.subSecondWait(n, cost, e.reserveOf(c)+e.held(level, n, c)); d > 0 {
			return clampWait(time.Duration(d), c.maxRetryAfter)
		}
		d := e.admitGradual(n, cost, level, r, c)
		if d == 0 {
			e.logSubSecond(n, cost)
		}
		return d
	}
	e.boundedReset(n)
	if e.reset != 0 && e.reset <= n && e.subSecondFixed() {
		e.openSubSecond(n)
	}
	if e.reset != 0 && e.reset <= n {
		// The window (or the assumed wait) is over: probe, see above.
		e.reset, e.assumed, e.openNext = 0, false, true
		e.probing, e.probeAt = true, n
	}
	if e.probing {
		if n < e.probeAt {
			return clampWait(time.Duration(e.probeAt-n), c.maxRetryAfter)
		}
		e.probeAt, e.probeSent = n+int64(c.assumedReset), n
		return 0
	}
	res := e.reserveOf(c) + e.held(level, n, c)
	if room := e.remaining - res; room >= cost || (room > 0 && e.limit > 0 && cost > e.limit-res) {
		e.remaining -= cost
		return 0
	}
	if e.reset == 0 {
		e.reset, e.assumed = n+int64(c.assumedReset), true
	}
	return clampWait(time.Duration(e.reset-n), c.maxRetryAfter)
}

// roomless says the server's figures have never shown room for another
// attempt: nginx's leaky bucket without a burst answers every success with
// nothing remaining, and the next request may still go an interval later.
// A success with nothing left and no reset more than a second ahead says
// so at once; the first figure with room after it is read as a probe's
// answer (see update). Its figures
// say nothing a count could use, and the key is admitted as one that
// publishes nothing; a pacer learns its rate from its throttles.
func (e *entry) roomless() bool { return e.known && e.maxRemaining == 0 && e.noRoom }

// top is what a gradual key refills up to: the most the server has shown
// it holds, which a bucket shallower than its published limit stays under
// and a deeper one passes; the limit until a figure shows it.
func (e *entry) top() int64 { return cmp.Or(e.capacity, e.limit) }

// reserveOf is the reserve the key keeps: of its limit, or of the most the
// server has shown it holds when the first is as much as that, or as the
// most it has shown left (a bucket of 20 under a limit of 3,000 a minute
// would otherwise keep back more than it ever holds; one that counts
// requests shows less left than a costly attempt's units suggest it held).
func (e *entry) reserveOf(c *config) int64 {
	if e.alone >= aloneAfter {
		// The figures have shown no one else on the quota: the share kept
		// back for others is lent until one shows (ReserveUnits stays).
		return c.reserve.Units
	}
	r := c.reserve.of(e.limit)
	if r >= min(e.capacity, max(e.maxRemaining, 1)) && (e.shallow() || e.reset-e.touched.Load() <= sameWindow) {
		// A reserve as deep as all the server has shown, which gives it
		// back within a second: a bucket shallower than its limit keeps
		// back its share of what it holds, and at least a unit.
		return max(c.reserve.of(e.capacity), min(r, 1))
	}
	return r
}

// admitGradual is admit for a gradual key refilling perNs units a
// nanosecond. e.mu is held.
func (e *entry) admitGradual(n, cost int64, level int, perNs float64, c *config) time.Duration {
	e.refill(n, perNs)
	top := e.top()
	res := e.reserveOf(c) + e.held(level, n, c)
	oversized := cost > top-res
	if room := e.remaining - res; room >= cost || (room > 0 && oversized) {
		e.remaining -= cost
		return 0
	}
	heard := max(e.touched.Load(), e.fillAt)
	if n >= e.probeAt && e.window == 0 && (n-heard >= int64(c.assumedReset) || e.reset > heard && n >= e.reset) {
		// Nothing has been heard for AssumedReset, or the reset the last
		// figures named has passed, while the count waits on a rate
		// learned from its figures, which may be too low: one attempt goes
		// to ask. (A published or documented window gives the rate.)
		e.probeAt = n + int64(c.assumedReset)
		e.remaining -= cost
		return 0
	}
	need := res + cost - e.remaining
	if oversized {
		need = res + 1 - e.remaining
	}
	d := time.Duration(math.Ceil(float64(need) / perNs))
	if e.window == 0 {
		if e.reset > n {
			d = min(d, time.Duration(e.reset-n)) // something comes back then
		}
		d = min(d, time.Duration(max(e.probeAt, heard+int64(c.assumedReset))-n))
	}
	return clampWait(max(d, 1), c.maxRetryAfter)
}

// refill brings a gradual key's remaining up to n at perNs units a
// nanosecond, up to its top. Whole units are credited; the fraction waits
// in fillAt.
func (e *entry) refill(n int64, perNs float64) {
	if n <= e.fillAt {
		return
	}
	top := e.top()
	if e.remaining >= top {
		e.fillAt = n
		return
	}
	units := int64(float64(n-e.fillAt)*perNs + 1e-9) // a wait of need/perNs, rounded up, credits need
	if units <= 0 {
		return
	}
	if e.remaining+units >= top {
		e.remaining, e.fillAt = top, n
		return
	}
	e.remaining += units
	e.fillAt += int64(float64(units) / perNs)
}

// contact notes that a response for the key was seen, and wakes the
// callers that waited for the first one.
func (e *entry) contact() {
	e.mu.Lock()
	if !e.contacted {
		e.contacted, e.probeAt = true, 0
		e.changed()
	}
	e.mu.Unlock()
}

// changed wakes the callers waiting for a response. e.mu is held.
func (e *entry) changed() {
	if e.wake != nil {
		close(e.wake)
		e.wake = nil
	}
}
