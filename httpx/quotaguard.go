package httpx

import (
	"net/http"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
)

// guardLayer is the quota guard: before an attempt it refuses (or, with
// quota.Options.Queue, holds) while the key's remaining allowance is inside
// the reserve and its reset is ahead, or while a Retry-After or a backoff
// blocks the key; after it, it reads what the response published.
//
// A request whose limiter is an adaptive rate limiter is not refused on the
// reserve: the guard hands the published quota to that limiter as a ceiling
// (AdaptiveRateLimiter.SetPublishedLimit) and lets it pace the requests.
// On the simulator's default scenario that pairing — CUBIC under the
// published quota — is the one mode that uses at least 97% of the quota with
// a handful of 429s, on every seed, while a guard that also refused on its
// reserve lost quota or drew hundreds of 429s (docs/simulator.md).
type guardLayer struct {
	next http.RoundTripper
	g    *quota.Guard
	// limiters are the client's limiter layers, to find a request's
	// adaptive rate limiter; set once the client is built.
	limiters []*hostSet
}

func (l *guardLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	key := l.g.Key(req)
	if rate := l.adaptiveRate(req); rate != nil {
		resp, err := l.next.RoundTrip(req)
		if err == nil {
			now := time.Now()
			l.g.Observe(key, resp.StatusCode, resp.Header, now)
			st, _ := l.g.State(key, now)
			// Nothing known lifts the ceiling: an API that publishes only
			// near its limit would otherwise pin the rate where it last spoke.
			rate.SetPublishedLimit(st.PerMinute(time.Minute))
		}
		return resp, err
	}
	slot, err := l.g.Enter(req.Context(), key)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	// Deferred, so that a panic below does not keep the slot for ever; and
	// after Observe, so that the attempt it admits next reads this
	// response's quota.
	defer slot.Release()
	resp, err := l.next.RoundTrip(req)
	if err == nil {
		l.g.Observe(key, resp.StatusCode, resp.Header, time.Now())
	}
	return resp, err
}

// adaptiveRate is the adaptive rate limiter that paces req, if any.
func (l *guardLayer) adaptiveRate(req *http.Request) *limit.AdaptiveRateLimiter {
	for _, s := range l.limiters {
		if r, ok := s.get(req).lim.(*limit.AdaptiveRateLimiter); ok {
			return r
		}
	}
	return nil
}
