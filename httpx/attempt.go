package httpx

import (
	"context"
	"net/http"

	"github.com/headroom-go/headroom/limit"
)

// attempt is what the layers of one attempt tell each other, carried in the
// attempt's request context: the limiter layer writes it, and the layers
// inside it read it (the quota guard counts the attempt's units with the
// cost the limiter layer estimated, and hands the published quota to the
// limiter that paced the attempt); the resilience layer, which makes the
// record for each attempt, reads it once the attempt is back. No layer
// reaches into another: what one learns of a request travels with it.
type attempt struct {
	// cost is the attempt's units as the outermost limiter layer estimated
	// them; 0 until one has.
	cost int
	// pacer is the adaptive rate limiter that paced the attempt, if a
	// limiter layer's limiter for its host is one: its throttles without a
	// hint are its to answer by slowing down.
	pacer *limit.AdaptiveRateLimiter
}

type attemptKey struct{}

// attemptIn is the record of the attempt ctx belongs to, or nil when no
// layer has made one.
func attemptIn(ctx context.Context) *attempt {
	a, _ := ctx.Value(attemptKey{}).(*attempt)
	return a
}

// withAttempt returns ctx carrying a, a new record for one attempt.
func withAttempt(ctx context.Context, a *attempt) context.Context {
	return context.WithValue(ctx, attemptKey{}, a)
}

// attemptOf is req's attempt record, and req carrying it: the one the
// resilience layer made, or a new one when no layer outside has.
func attemptOf(req *http.Request) (*http.Request, *attempt) {
	if a := attemptIn(req.Context()); a != nil {
		return req, a
	}
	a := new(attempt)
	return req.WithContext(withAttempt(req.Context(), a)), a
}

// paceBy notes that a limiter layer took cost units from lim for the
// attempt; the outermost limiter layer's note is the one that stands.
func (a *attempt) paceBy(lim limit.Limiter, cost int) {
	if a.cost == 0 {
		a.cost = max(cost, 1)
	}
	if r, ok := lim.(*limit.AdaptiveRateLimiter); ok && a.pacer == nil {
		a.pacer = r
	}
}

// units is the attempt's cost for the quota guard: what a limiter layer
// estimated, at least 1.
func (a *attempt) units() int {
	if a == nil {
		return 1
	}
	return max(a.cost, 1)
}

// pacedBy is the adaptive rate limiter that paced the attempt, or nil.
func (a *attempt) pacedBy() *limit.AdaptiveRateLimiter {
	if a == nil {
		return nil
	}
	return a.pacer
}
