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
// When the held reset passes, the window is over (seed 003 §2.3): remaining
// goes back to the limit if one was published. A reset the guard assumed
// (AssumedReset, no reset published) lets one probe through instead.
//
// Units are counted per request. For token buckets (OpenAI, Anthropic) the
// decrement undercounts; the server's figures correct it on each response.
type entry struct {
	mu        sync.Mutex
	known     bool // remaining and limit came from a response
	remaining int64
	limit     int64
	reset     int64 // when the window ends
	assumed   bool  // reset was assumed, not published
	blocked   int64 // Retry-After or backoff: nothing before this
	bo        *backoff.ExponentialBackOff

	touched atomic.Int64          // last response (or slot) seen
	shared  atomic.Pointer[entry] // the state this key shares (Options.Share)
	sem     chan struct{}         // in-flight slots; nil without a cap
}

// sameWindow is how far two published resets may differ and still name one
// window.
const sameWindow = int64(time.Second)

// admit decides one attempt at n: 0 and one unit taken, or the wait.
// e.mu is held.
func (e *entry) admit(n int64, c *config) time.Duration {
	if e.blocked > n {
		return clampWait(time.Duration(e.blocked-n), c.maxRetryAfter)
	}
	if !e.known || n-e.touched.Load() > int64(c.ttl) {
		return 0 // nothing published, or stale: treated as reset
	}
	if e.reset != 0 && e.reset <= n {
		e.reset = 0
		switch {
		case e.assumed:
			e.remaining = c.reserve.of(e.limit) + 1 // one probe
			e.assumed = false
		case e.limit > 0:
			e.remaining = e.limit
		default:
			e.known = false
			return 0
		}
	}
	if e.remaining <= c.reserve.of(e.limit) {
		if e.reset == 0 {
			e.reset, e.assumed = n+int64(c.assumedReset), true
		}
		return clampWait(time.Duration(e.reset-n), c.maxRetryAfter)
	}
	e.remaining--
	return 0
}

// update takes a published bucket at n; see the rules above. e.mu is held.
func (e *entry) update(q *Quota, n int64) {
	if q.Limit > 0 {
		e.limit = q.Limit
	}
	var qr int64
	if !q.Reset.IsZero() {
		qr = q.Reset.UnixNano()
		if qr <= n {
			return // that window is over
		}
	}
	switch {
	case !e.known || e.assumed || e.reset == 0 || e.reset <= n || qr == 0 || qr > e.reset+sameWindow:
		e.remaining, e.reset, e.assumed = q.Remaining, qr, false
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
}

func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
