package quota

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The state of one key (seed 003 §2.3): what the server last published —
// remaining, limit, reset — the guard's own count since, the instant it is
// blocked until, the backoff curve, the in-flight slots. Times are Unix
// nanoseconds; 0 means unknown.
//
// Optimistic decrement. Each attempt the guard admits takes one unit off
// its copy of the remaining allowance at once, before the server has
// counted it, so that callers racing for the last units cannot all spend
// them: of N concurrent callers with R units above the reserve, exactly R
// are admitted. Responses then correct the copy:
//
//   - a response whose reset is the one held (within a second: delta-based
//     resets jitter with latency) lowers the copy to the server's figure if
//     that is lower, and never raises it. The copy already counts attempts
//     still in flight, which the server's figure from an earlier attempt
//     does not; a lower server figure means someone else spends the quota.
//   - a response naming a later reset starts a new window: its figures are
//     taken as they are.
//   - a response naming an earlier reset, or one already past, describes a
//     window that is over: its remaining is not taken.
//   - a response with no reset (Shopify) is taken as it is.
//
// Units. An attempt of cost units (AdmitN; Admit is cost 1) is admitted
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
// as they are (any response with quota headers whose reset is ahead, or
// that has no reset, ends the probing: an answer to an earlier attempt
// arriving now is as new). If no answer with figures comes within
// AssumedReset of the probe — it was lost, or answered without headers by
// an error — the next attempt is a probe again; so at most one attempt per
// AssumedReset goes out while the guard is blind. A fixed window pays one
// round trip per window for this; a sliding window is no longer flooded.
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
	blocked int64 // Retry-After or backoff: nothing before this
	bo      *backoff.ExponentialBackOff

	touched atomic.Int64          // last response (or slot) seen
	shared  atomic.Pointer[entry] // the state this key shares (Options.Share)
	sem     chan struct{}         // in-flight slots; nil without a cap
}

// sameWindow is how far two published resets may differ and still name one
// window.
const sameWindow = int64(time.Second)

// admit decides one attempt of cost (≥ 1) units at n: 0 and the units
// taken, or the wait. e.mu is held.
func (e *entry) admit(n, cost int64, c *config) time.Duration {
	if e.blocked > n {
		return clampWait(time.Duration(e.blocked-n), c.maxRetryAfter)
	}
	if !e.known || n-e.touched.Load() > int64(c.ttl) {
		return 0 // nothing published, or stale: treated as reset
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
		e.probeAt = n + int64(c.assumedReset)
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

// forget drops the published remaining and reset (silence below a
// publishing threshold, see above). e.mu is held.
func (e *entry) forget() {
	e.known, e.remaining, e.reset, e.assumed, e.probing, e.probeAt = false, 0, 0, false, false, 0
}

// update takes a published bucket at n from a response that succeeded or
// not; see the rules above. e.mu is held.
func (e *entry) update(q *Quota, n int64, success bool) {
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
	switch {
	case !e.known || e.assumed || e.reset == 0 || e.reset <= n || qr == 0 || qr > e.reset+sameWindow:
		e.remaining, e.reset, e.assumed, e.probing = q.Remaining, qr, false, false
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
