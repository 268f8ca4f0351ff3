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
	blocked int64 // Retry-After or backoff: nothing before this
	boStep  int64 // when the backoff last took a step
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
	nAdm     int // admissions recorded, in all

	touched atomic.Int64          // last response (or slot) seen
	shared  atomic.Pointer[entry] // the state this key shares (Options.Share)
	sem     chan struct{}         // in-flight slots; nil without a cap
	waiting atomic.Int64          // units Acquire holds for the key (Options.QueueLimit)
}

// admission is one admitted attempt: when, its units, and whether its
// answer has been seen.
type admission struct {
	at       int64
	cost     int64
	answered bool
}

// admittedKept is how many admissions a key remembers to count the units
// still out after an attempt (see "In flight").
const admittedKept = 32

// record notes an admission of cost units at n. e.mu is held.
func (e *entry) record(n, cost int64) {
	e.admitted[e.nAdm%admittedKept] = admission{at: n, cost: cost}
	e.nAdm++
}

// outSince marks answered the attempt admitted at sent (the earliest not
// yet answered, when several were admitted at that instant) and returns the
// units admitted after it whose answers have not been seen: they may still
// be on their way to the server, which then cannot have counted them. An
// attempt answered already was counted, whatever the order the server saw
// them in. It returns 0 when sent is 0 or older than the admissions kept.
// e.mu is held.
func (e *entry) outSince(sent int64) int64 {
	if sent == 0 {
		return 0
	}
	var out int64
	for i := e.nAdm - 1; i >= max(e.nAdm-admittedKept, 0); i-- {
		a := &e.admitted[i%admittedKept]
		if a.at < sent {
			break
		}
		if a.at == sent && !a.answered {
			// The attempt itself, unless an earlier one of that instant
			// is still unanswered.
			if j := i - 1; j < 0 || e.admitted[j%admittedKept].at != sent || e.admitted[j%admittedKept].answered {
				a.answered = true
				return out
			}
		}
		if !a.answered {
			out += a.cost
		}
	}
	return out
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
	if !e.known || n-e.touched.Load() > int64(c.ttl) {
		return 0 // nothing published, or stale: treated as reset
	}
	if w := e.refillWindow(); e.gradual && w > 0 {
		return e.admitGradual(n, cost, w, c)
	}
	if e.reset != 0 && e.reset <= n {
		// The window (or the assumed wait) is over: probe, see above.
		e.reset, e.assumed = 0, false
		e.probing, e.probeAt = true, n
	}
	if e.probing {
		if n < e.probeAt {
			return clampWait(time.Duration(e.probeAt-n), c.maxRetryAfter)
		}
		e.probeAt, e.probeSent = n+int64(c.assumedReset), n
		return 0
	}
	res := c.reserve.of(e.limit)
	if room := e.remaining - res; room >= cost || (room > 0 && e.limit > 0 && cost > e.limit-res) {
		e.remaining -= cost
		return 0
	}
	if e.reset == 0 {
		e.reset, e.assumed = n+int64(c.assumedReset), true
	}
	return clampWait(time.Duration(e.reset-n), c.maxRetryAfter)
}

// refillWindow is the window over which a gradual key refills its limit:
// the published or documented one, else the learned one; 0 when neither is
// known or no limit is.
func (e *entry) refillWindow() int64 {
	if e.limit <= 0 {
		return 0
	}
	return cmp.Or(e.window, e.learned)
}

// admitGradual is admit for a gradual key refilling Limit every w
// nanoseconds. e.mu is held.
func (e *entry) admitGradual(n, cost, w int64, c *config) time.Duration {
	e.refill(n, w)
	res := c.reserve.of(e.limit)
	oversized := cost > e.limit-res
	if room := e.remaining - res; room >= cost || (room > 0 && oversized) {
		e.remaining -= cost
		return 0
	}
	need := res + cost - e.remaining
	if oversized {
		need = res + 1 - e.remaining
	}
	d := time.Duration(math.Ceil(float64(need) * float64(w) / float64(e.limit)))
	return clampWait(max(d, 1), c.maxRetryAfter)
}

// refill brings a gradual key's remaining up to n at Limit every w
// nanoseconds. Whole units are credited; the fraction waits in fillAt.
func (e *entry) refill(n, w int64) {
	if n <= e.fillAt {
		return
	}
	if e.remaining >= e.limit {
		e.fillAt = n
		return
	}
	units := int64(float64(n-e.fillAt) * float64(e.limit) / float64(w))
	if units <= 0 {
		return
	}
	if e.remaining+units >= e.limit {
		e.remaining, e.fillAt = e.limit, n
		return
	}
	e.remaining += units
	e.fillAt += int64(float64(units) * float64(w) / float64(e.limit))
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
}

// update takes a published bucket at n from a response to an attempt sent
// at sent (0: unknown), after which out units went out that are still
// unanswered, that succeeded or not; see the rules above. e.mu is held.
func (e *entry) update(q *Quota, n, sent, out int64, success bool) {
	if (q.Limit > 0 && q.Limit != e.limit) || q.Policy != e.policy || q.Key != e.bucket {
		// Another bucket binds now (GitHub's search after its core, on one
		// host): what was learned of the last one's window is not its.
		e.policy, e.bucket, e.learned = q.Policy, q.Key, 0
	}
	if q.Limit > 0 {
		e.limit = q.Limit
	}
	e.window = int64(q.Window)
	var qr int64
	if !q.Reset.IsZero() {
		qr = q.Reset.UnixNano()
		if qr <= n {
			return // that window is over
		}
		if success {
			// A reset is never further than a window away, except a
			// penalty's, which only a refusal carries.
			e.learned = max(e.learned, min(qr-n, maxLearnedWindow))
		}
	}
	// The server's figure less the units sent since this attempt, which it
	// cannot have counted yet; when those are not known, only lowering
	// the count is safe.
	fresh := q.Remaining - out
	if w := e.refillWindow(); e.gradual && w > 0 && e.known {
		e.refill(n, w)
		e.remaining, e.reset = min(e.remaining, fresh), qr
		return
	}
	if e.probing {
		if sent != 0 && sent < e.probeSent {
			return // an answer to an attempt sent before the probe
		}
		// The probe's answer says how the server gives units back.
		e.gradual = e.refillWindow() > 0 && 2*(q.Remaining+1) < e.limit
		e.fillAt = n
	}
	switch {
	case !e.known || e.assumed || e.reset == 0 || e.reset <= n || qr == 0 || qr > e.reset+sameWindow:
		e.remaining, e.reset, e.assumed, e.probing = fresh, qr, false, false
		e.fillAt = n
	case qr < e.reset-sameWindow:
		return // an older window, answered late
	default:
		e.remaining = min(e.remaining, q.Remaining)
	}
	e.known = true
}

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
// limit. It is what an adaptive rate limiter's SetPublishedLimit takes:
//
//	st, _ := g.State(key, now)
//	lim.SetPublishedLimit(st.PerMinute(time.Minute))
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
