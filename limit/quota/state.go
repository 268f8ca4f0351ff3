package quota

import (
	"cmp"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The state of one key: what the server last published —
// remaining, limit, reset — the guard's own count since, the instant it is
// blocked until, the backoff curve, the in-flight slots. Times are Unix
// nanoseconds; 0 means unknown.
//
// Optimistic decrement. Each attempt the guard admits takes one unit off
// its copy of the remaining allowance at once, before the server has
// counted it, so that callers racing for the last units cannot all spend
// them: of N concurrent callers with R units above the reserve, exactly R
// are admitted.
//
// In flight. A figure that starts a count (a new window, a probe's answer)
// or that corrects a gradual key's refill is taken, when the attempt's send
// time is known (Response.Sent), less the units the guard admitted after
// that attempt went out and whose answers it has not seen: those may still
// be on their way, and the figure does not count them. (An attempt answered
// already was counted, in whatever order the server took them.) The guard
// remembers its last 32 admissions for this; an attempt older than them is
// taken at the figure. Within a window of a fixed key, where the count
// already takes each attempt off as it goes, a figure only lowers it, by
// these rules:
//
//   - a response whose reset is the one held (within a second: delta-based
//     resets jitter with latency) lowers the copy to the server's figure if
//     that is lower, and never raises it. The copy already counts attempts
//     still in flight, which the server's figure from an earlier attempt
//     does not; a lower server figure means someone else spends the quota.
//   - a response naming a later reset starts a new window: its figures are
//     taken, less the units still out (above).
//   - a response naming an earlier reset, or one already past, describes a
//     window that is over: its remaining is not taken.
//   - a response with no reset (Shopify) is taken as it is.
//
// Units. An attempt of cost units (TryAcquireAt, Acquire) is admitted
// when the remaining allowance less the cost stays at or above the reserve,
// and takes its cost off the copy. An attempt that could never fit — its
// cost above the published limit less the reserve — goes once the remaining
// is above the reserve at all, and drives the copy below it; with no limit
// published, nothing says it could never fit, so it waits for room. For token buckets
// (OpenAI, Anthropic) a cost of 1 undercounts; the server's figures correct
// it on each response.
//
// After a reset: one probe. When the held reset passes — published, or
// assumed (AssumedReset, no reset published; or a Retry-After's end) — the
// guard does not know what came back: a fixed window is full again, a
// sliding window (SharePoint) has freed only the units of its oldest
// second, a token bucket a few tokens. So it sets nothing back. It lets one
// attempt through, the probe, whatever its cost, and holds every other
// attempt until the probe's answer publishes the figures, which are taken
// as a new window's (any response with quota headers whose reset is ahead,
// or that has no reset, ends the probing, unless its attempt is known to
// have gone out before the probe). If no answer with figures comes within
// AssumedReset of the probe — it was lost, or answered without headers by
// an error — the next attempt is a probe again; so at most one attempt per
// AssumedReset goes out while the guard is blind. A fixed window pays one
// round trip per window for this; a sliding window is no longer flooded.
//
// Refill. Servers give their units back in one of two ways, and the guard
// learns which at the first probe after a reset. A fixed window (and a
// sliding log or token bucket spent in one burst) gives them back at the
// reset: the probe's answer shows most of the limit remaining, and the
// guard goes on spending the remaining down to the reserve and holding
// until each reset. A sliding counter (this window's count plus the last
// one's, weighted), a sliding log spent at a steady pace and a token bucket
// give them back a few at a time: the probe's answer shows less than half
// the limit. Holding until each reset would then serialize the client
// around resets that move every second, and waiting for a sliding
// counter's window to end would halve its throughput. So from then on the
// key is gradual: its remaining refills at the published rate, Limit over
// the window (published, documented or learned; see State.Window), from
// the last figures a response gave, and an attempt waits only until the
// refill covers its cost above the reserve. Responses still lower the
// count to the server's figure less the units still out, never raise it;
// resets no longer hold; a throttle's Retry-After says nothing comes back
// before its end, and the refill starts there. A key whose window is
// unknown cannot refill at a rate and stays fixed.
//
// Silence below a publishing threshold. Some servers publish their figures
// only once most of the quota is used (SharePoint: from 80%). A 2xx with no
// quota headers and no Retry-After, for a key whose held reset has passed
// (or that is probing), says the key is back under that threshold: the
// guard forgets the published remaining and reset, and admits freely until
// a response publishes again. It keeps the last published limit and window
// (State.Limit, State.Window; State.Known turns false). Before the held
// reset a silent 2xx changes nothing: endpoints of one key may differ in
// what they publish.
type entry struct {
	mu        sync.Mutex
	known     bool // remaining and limit came from a response
	remaining int64
	limit     int64
	window    int64 // the published or documented window, ns; 0 when neither
	// learned is the longest time to a reset a success has shown for the
	// bucket named by policy, bucket and limit: the window, as far as it
	// is known, when neither the headers nor the API's documents give it.
	learned int64
	policy  string
	bucket  string
	reset   int64 // when the window ends
	assumed bool  // reset was assumed, not published
	probing bool  // the reset passed: one probe at a time, until figures
	probeAt int64 // when probing, the next probe may go at this instant
	// probeSent is when the probe awaited went out: an answer to an
	// attempt sent before it is no answer to the probe.
	probeSent int64
	// gradual says the server gives units back over time, not at the
	// reset (see Refill); fillAt is when remaining was last refilled.
	gradual bool
	fillAt  int64
	// minRTT is the shortest round trip an answer has shown.
	minRTT int64
	// continuous says the figures have shown units coming back between
	// resets, as a bucket's or a sliding counter's do: the key refills at
	// the rate they show (refill.go).
	continuous bool
	// last is the remaining the last figures showed; latestRem the one
	// the last answer with nothing else out showed, and lastUpTo the units
	// sent by then.
	last, latestRem, lastUpTo int64
	// quiet says a success has come without figures: the server publishes
	// only some of the time. figures counts the responses with figures.
	quiet   bool
	figures int
	// alone counts the answers in a row, within a fixed window, whose
	// figures only this client's attempts explain.
	alone int
	// sharedAt is when the figures last showed another client spending the
	// quota.
	sharedAt int64
	// fixed says a probe's answer showed most of the limit back at a
	// reset: the server gives its units back at its resets.
	fixed bool
	// rate is how fast the server gives units back, learned (refill.go).
	rate refillRate
	// capacity is the most the server has shown it holds: the largest
	// remaining seen, with the units of the attempt it answered.
	capacity int64
	// floor is the lowest remaining a response has shown since the held
	// reset was taken: in a window that gives nothing back before its
	// reset, no later figure of that window climbs far above it.
	floor int64
	// openerSent is when the first attempt after the last window ended
	// went out, with openerUnits the units sent before it; bound is the
	// shortest time from such an attempt to a reset a success of its
	// window has shown: a window that began with that attempt is no
	// longer. openNext says the next attempt opens a window.
	openerSent, openerUnits, bound int64
	openNext                       bool
	// maxRemaining is the largest remaining a response has shown, and
	// noRoom says a success showed nothing left with no reset far ahead
	// (see roomless).
	maxRemaining int64
	noRoom       bool
	// cutAt is when the refill rate was last cut for a throttle.
	cutAt int64
	// answered is when the latest attempt whose answer was seen went out.
	answered int64
	// documented says window is the API's documented window, not one the
	// headers published: what the figures show is then learned over it.
	documented bool
	blocked    int64 // Retry-After or backoff: nothing before this
	boStep     int64 // when the backoff last took a step
	// throttledSince is when the first of the throttles since the last
	// success arrived; 0 after a success.
	throttledSince int64
	bo             *backoff.ExponentialBackOff
	rng            *rand.Rand // the backoff's jitter, from Options.Seed
	// wake, when not nil, is closed when a response changes what the key
	// admits, so that callers waiting for a probe's answer go at once.
	wake chan struct{}
	// contacted says a response for the key has been seen; until then one
	// attempt goes at a time (see admit).
	contacted bool
	// admitted holds the last admissions (see "In flight" above).
	admitted [admittedKept]admission
	nAdm     int   // admissions recorded, in all
	units    int64 // units admitted, in all
	// answeredUnits is the units of the admitted attempts answered.
	answeredUnits int64
	refused       int64 // units of the attempts answered with a throttle, in all

	touched atomic.Int64          // last response (or slot) seen
	shared  atomic.Pointer[entry] // the state this key shares (Options.Share)
	sem     chan struct{}         // in-flight slots; nil without a cap
	waiting atomic.Int64          // units Acquire holds for the key (Options.QueueLimit)
	used    atomic.Uint64         // the key map's clock at the key's last use (keys)
}

// admission is one admitted attempt: when, its units, the units admitted
// in all up to it, and whether its answer has been seen.
type admission struct {
	at, cost, upTo int64
	answered       bool
}

// admittedKept is how many admissions a key remembers to count the units
// still out after an attempt (see "In flight").
const admittedKept = 32

// record notes an admission of cost units at n. e.mu is held.
func (e *entry) record(n, cost int64) {
	if e.openerSent == 0 || e.openNext {
		e.openerSent, e.openerUnits, e.openNext = n, e.units, false
	}
	e.units += cost
	e.admitted[e.nAdm%admittedKept] = admission{at: n, cost: cost, upTo: e.units}
	e.nAdm++
}

// outSince marks answered the attempt admitted at sent (the earliest not
// yet answered, when several were admitted at that instant) and returns the
// units admitted after it whose answers have not been seen: they may still
// be on their way to the server, which then cannot have counted them. An
// attempt answered already was counted, whatever the order the server saw
// them in. It also returns the attempt's own units, 1 when it is not among
// the admissions kept, and the units admitted in all up to it (0 when not
// kept). It returns no units out when sent is 0 or older than the
// admissions kept. e.mu is held.
func (e *entry) outSince(sent int64) (out int64, a admission) {
	a.cost = 1
	if sent == 0 {
		return 0, a
	}
	for i := e.nAdm - 1; i >= max(e.nAdm-admittedKept, 0); i-- {
		adm := &e.admitted[i%admittedKept]
		if adm.at < sent {
			break
		}
		if adm.at == sent && !adm.answered {
			// The attempt itself, unless an earlier one of that instant
			// is still unanswered.
			if j := i - 1; j < max(e.nAdm-admittedKept, 0) || e.admitted[j%admittedKept].at != sent || e.admitted[j%admittedKept].answered {
				adm.answered = true
				return out, *adm
			}
		}
		if !adm.answered {
			out += adm.cost
		}
	}
	// Not among those kept: its units are taken as the mean admitted.
	return out, admission{cost: max((e.units+int64(e.nAdm)/2)/int64(max(e.nAdm, 1)), 1)}
}

// sameWindow is how far two published resets may differ and still name one
// window.
const sameWindow = int64(time.Second)

// admit decides one attempt of cost (≥ 1) units at n: 0 and the units
// taken, or the wait. e.mu is held.
//
// The first attempt to a key the guard has heard nothing from goes alone,
// and the others wait for its answer (at most AssumedReset, then another
// goes): a client that starts with many callers at once learns the quota
// from the first response before it spends the quota, where otherwise all
// its callers' first attempts would be out before any answer came.
func (e *entry) admit(n, cost int64, c *config) time.Duration {
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
	if !e.known || n-e.touched.Load() > int64(c.ttl) || e.roomless() {
		return 0 // nothing published, or stale: treated as reset
	}
	if r := e.refillPerNs(); e.gradual && r > 0 {
		return e.admitGradual(n, cost, r, c)
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
	res := e.reserveOf(c)
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

// refillPerNs is how fast a gradual key's units come back, units a
// nanosecond: Limit over the window the headers publish; else, for a key
// that refills continuously (a bucket, a sliding counter), the rate the
// figures have shown (refill.go); else Limit over the documented or learned
// window (a sliding log gives back what was spent a window ago: over a
// window, the limit), or the rate shown when no window is known. 0 when
// nothing says.
func (e *entry) refillPerNs() float64 {
	if e.limit <= 0 {
		return 0
	}
	if e.window > 0 && !e.documented {
		return float64(e.limit) / float64(e.window)
	}
	if r := e.rate.perNs(); r > 0 && (e.continuous || e.limitWindow() == 0) {
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
	return w
}

// top is what a gradual key refills up to: the most the server has shown
// it holds, which a bucket shallower than its published limit stays under
// and a deeper one passes; the limit until a figure shows it.
func (e *entry) top() int64 { return cmp.Or(e.capacity, e.limit) }

// reserveOf is the reserve the key keeps: of its limit, or of the most the
// server has shown it holds when the first is as much (a bucket of 20 under a limit of 3,000 a
// minute would otherwise keep back more than it ever holds).
func (e *entry) reserveOf(c *config) int64 {
	if e.alone >= aloneAfter {
		// The figures have shown no one else on the quota: the share kept
		// back for others is lent until one shows (ReserveUnits stays).
		return c.reserve.Units
	}
	r := c.reserve.of(e.limit)
	if r >= e.capacity && (e.shallow() || e.reset-e.touched.Load() <= sameWindow) {
		// A reserve as deep as all the server has shown, which gives it
		// back within a second: a bucket shallower than its limit keeps
		// back its share of what it holds, and at least a unit.
		return max(c.reserve.of(e.capacity), min(r, 1))
	}
	return r
}

// admitGradual is admit for a gradual key refilling perNs units a
// nanosecond. e.mu is held.
func (e *entry) admitGradual(n, cost int64, perNs float64, c *config) time.Duration {
	e.refill(n, perNs)
	top := e.top()
	res := e.reserveOf(c)
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

// pacingGrace is how long after a throttle a pacer that has slowed down on
// it is given before throttles of attempts sent later count against the
// key: long enough for a cut rate to reach the server and a sliding window
// of a second to free units. A pacer that cannot help (a window spent)
// sends at its rate meanwhile, each attempt a throttle; a shorter grace
// cost more than it saved against sliding logs of a second.
const pacingGrace = int64(time.Second)

// pacingFailed notes a throttle, at n, of a paced attempt sent at sent, and
// reports whether it shows the pacing failing: the throttles have gone on,
// with no success between, for an attempt sent pacingGrace after the first
// of them. e.mu is held.
func (e *entry) pacingFailed(sent, n int64) bool {
	if e.throttledSince == 0 {
		e.throttledSince = n
		return false
	}
	return sent > e.throttledSince+pacingGrace || sent == 0 && n > e.throttledSince+pacingGrace
}

// changed wakes the callers waiting for a response. e.mu is held.
func (e *entry) changed() {
	if e.wake != nil {
		close(e.wake)
		e.wake = nil
	}
}

// forget drops the published remaining and reset (silence below a
// publishing threshold, see above). It keeps what the guard learned of the
// server: the limit, the window and how it refills. e.mu is held.
func (e *entry) forget() {
	e.known, e.remaining, e.reset, e.assumed, e.probing, e.probeAt = false, 0, 0, false, false, 0
	e.openNext = true
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

// update takes a published bucket at n from a response to an attempt of
// cost units sent at sent (0: unknown), after which out units went out that
// are still unanswered, that succeeded or not; see the rules above. e.mu is
// held.
func (e *entry) update(q *Quota, n, sent, out int64, adm admission, success bool) {
	switch {
	case q.Policy != e.policy || q.Key != e.bucket:
		// Another bucket binds now (GitHub's search after its core, on one
		// host): nothing learned of the last one is its.
		e.policy, e.bucket, e.learned, e.capacity, e.bound = q.Policy, q.Key, 0, 0, 0
		e.gradual, e.fixed, e.continuous, e.maxRemaining, e.noRoom = false, false, false, 0, false
		e.rate.restart()
	case q.Limit > 0 && q.Limit != e.limit:
		// The same bucket with another limit: it refills as before, but
		// neither what it holds nor how fast it gives back is known.
		e.learned, e.capacity = 0, 0
		e.rate.restart()
	}
	if q.Limit > 0 {
		e.limit = q.Limit
	}
	e.window, e.documented = int64(q.Window), q.documented
	held := q.Remaining
	if success {
		held += adm.cost
	}
	e.capacity = max(e.capacity, held)
	if e.roomless() && q.Remaining > 0 {
		// Room after all: the first figure the key was admitted freely
		// for says how the server gives units back, as a probe's does.
		e.probing, e.probeSent = true, sent
	}
	e.maxRemaining = max(e.maxRemaining, q.Remaining)
	var qr int64
	if !q.Reset.IsZero() {
		if qr = q.Reset.UnixNano(); qr <= n {
			if e.fixed || e.probing && sent == 0 {
				return // that window is over: an answer that came late
			}
			// A bucket full by now, or one whose reset rounds to the
			// second: the figures stand, with no reset ahead.
			qr = 0
		}
	}
	if success && q.Remaining == 0 && (qr == 0 || qr-n <= sameWindow) {
		e.noRoom = true
	}
	if success && qr != 0 {
		// A reset is never further than a window away, except a
		// penalty's, which only a refusal carries.
		e.learned = max(e.learned, min(qr-n, maxLearnedWindow))
		if e.openerSent != 0 && qr-e.openerSent < cmp.Or(e.bound, math.MaxInt64) && e.countsOwnSince(q, adm) {
			// A window that began with the attempt that opened this one
			// (a fixed window counted from the first request, a sliding
			// log whose oldest unit is at most it) ends at most this long
			// after it.
			e.bound = qr - e.openerSent
		}
	}
	// Answers to attempts sent before one answered already may have been
	// counted after it; the latest attempt's answer has no such lag, and
	// its figure stands, higher than the count or lower.
	if sent != 0 && n > sent {
		e.minRTT = min(cmp.Or(e.minRTT, n-sent), n-sent)
	}
	latest := sent != 0 && sent >= e.answered && adm.upTo > 0
	e.answered = max(e.answered, sent)
	if latest {
		if !e.fixed {
			e.rate.observe(sent, adm.upTo, e.refused, q.Remaining, held >= e.capacity-climbSlack(e.capacity))
		}
	}
	if latest && out == 0 {
		// Nothing out: the server has counted every unit sent.
		if e.lastUpTo > 0 && e.latestRem-(e.units-e.lastUpTo)-q.Remaining > climbSlack(e.limit) {
			// It counted more than this client sent since its last such
			// figure: another client spends the same quota.
			e.sharedAt, e.alone = n, 0
		}
		e.lastUpTo, e.latestRem = e.units, q.Remaining
	}
	e.figures++
	if !e.continuous && e.known && (e.showsRefill(q.Remaining, qr, n) || e.shallow()) {
		e.gradual, e.continuous, e.fixed, e.fillAt = true, true, false, n
	}
	e.last = q.Remaining
	// The server's figure less the units sent since this attempt, which it
	// cannot have counted yet; when those are not known, only lowering
	// the count is safe.
	fresh := q.Remaining - out
	if r := e.refillPerNs(); e.gradual && r > 0 && e.known {
		e.refill(n, r)
		if latest && e.window == 0 && !e.othersSpend(n) {
			// Units back sooner than the rate says, where no window says
			// what comes back when (a sliding log gives back what was
			// spent a window ago): a count no one else spends is the
			// client's to spend.
			e.remaining = max(e.remaining, fresh)
		}
		if sent != 0 && n > sent {
			// What came back since the server counted, about half the
			// round trip ago, is not in its figure.
			fresh += int64(float64(n-sent) / 2 * r)
		}
		e.remaining, e.reset = min(e.remaining, fresh), qr
		return
	}
	if e.probing {
		if sent != 0 && sent < e.probeSent {
			return // an answer to an attempt sent before the probe
		}
		// The probe's answer says how the server gives units back: most
		// of the limit with a new window's reset ahead is a fixed window;
		// less, or a bucket full again with no reset ahead, a server that
		// refills as it goes. A throttle says only that it came early.
		switch {
		case !success:
		case 2*(q.Remaining+1) >= e.limit && 2*(qr-n) >= e.learned:
			e.gradual, e.fixed = false, true
			e.rate.restart()
		case 2*(q.Remaining+1) >= e.limit:
			// Most of it back, and full again soon: a bucket.
			e.gradual, e.continuous = true, true
		default:
			e.gradual = e.refillPerNs() > 0
		}
		e.fillAt = n
	}
	switch {
	case !e.known || e.assumed || e.reset == 0 || e.reset <= n || qr == 0 || qr > e.reset+sameWindow:
		e.remaining, e.reset, e.assumed, e.probing = fresh, qr, false, false
		e.fillAt, e.floor = n, q.Remaining
		if w := e.limitWindow(); e.fixed && success && sent != 0 && w > 0 && qr != 0 {
			// A window this attempt found new ends at most a window after
			// it arrived, which was at most a leg before its answer; the
			// next attempt, a leg on its way, goes then. A published reset
			// in whole seconds would hold up to a second longer.
			e.reset = min(qr, n-2*e.oneWay()+w)
		}
	case qr < e.reset-sameWindow:
		return // an older window, answered late
	default:
		if e.fixed && out == 0 {
			// Nothing out, in a window that gives nothing back before its
			// reset: the count and the server's agree when no one else
			// spends the quota.
			if q.Remaining < e.remaining {
				e.alone = 0
			} else {
				e.alone++
			}
		}
		e.remaining, e.floor = min(e.remaining, q.Remaining), min(e.floor, q.Remaining)
	}
	e.known = true
}

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
func (e *entry) windowOfLimit() time.Duration {
	if r := e.rate.perNs(); e.gradual && e.continuous && r > 0 && (e.window == 0 || e.documented) {
		// A rate learned from the client's own spending, with no window
		// published or documented: the pacer is given room above it,
		// and the guard paces by its count.
		return time.Duration(float64(e.limit) / (pacerRoom * r))
	}
	return time.Duration(e.limitWindow())
}

// pacerRoom is how far above a learned refill rate a pacer may go.
const pacerRoom = 2

// State is a snapshot of a key, for dashboards and tests.
type State struct {
	// Known says the key holds fresh published figures.
	Known        bool
	Remaining    int64 // the guard's count: published, less attempts since
	Limit        int64
	Reset        time.Time // zero when unknown
	BlockedUntil time.Time // zero when not blocked
	InFlight     int
	Updated      time.Time // the last response that touched the key
	// Window is the window of Limit: the published or documented one
	// (Quota.Window); else, for an API with no single window (Discord's
	// buckets), the longest time to a reset that a successful response of
	// this bucket has shown, since no reset is further away than the window;
	// 0 when nothing says.
	Window time.Duration
	// Probing says the held reset has passed and the guard lets one probe
	// through at a time until a response publishes the figures again.
	Probing bool
}

// PerMinute is Limit as units per minute: Limit over Window, or over
// window when nothing says what Window is (no published or documented
// window, no reset seen yet). It is 0 when the state is not Known or has no
// limit. It is what the adaptive rate engine's SetPublishedLimit takes, r
// an *adaptive.Rate on its own clock (since):
//
//	st, _ := g.State(key, now)
//	r.SetPublishedLimit(since, st.PerMinute(time.Minute), st.Window)
func (s State) PerMinute(window time.Duration) float64 {
	if !s.Known || s.Limit <= 0 {
		return 0
	}
	w := s.Window
	if w <= 0 {
		w = window
	}
	if w <= 0 {
		return 0
	}
	return float64(s.Limit) * float64(time.Minute) / float64(w)
}

func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
