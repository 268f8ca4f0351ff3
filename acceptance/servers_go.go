package acceptance

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"time"

	"github.com/didip/tollbooth/v7"
	"github.com/go-chi/httprate"
	"github.com/ulule/limiter/v3"
	"github.com/ulule/limiter/v3/drivers/middleware/stdlib"
	"github.com/ulule/limiter/v3/drivers/store/memory"
)

// The servers in this file are Go middleware in this process, each guarding
// okHandler with one quota for every request (one key), each request one
// unit whatever its CostHeader.

// HTTPRate is go-chi/httprate v0.16.1's NewRateLimiter(l.Units, l.Window)
// with its local counter: a sliding-window counter. Windows are aligned to
// the instant the limiter is made. A request is refused (429) when
// round(previous window's count × (time left in this window / window) +
// this window's count) + 1 > Units; refusals are not counted.
//
// h picks the headers: PublishXRateLimit is its default set —
// X-RateLimit-Limit, X-RateLimit-Remaining (Units − that rounded estimate),
// X-RateLimit-Reset (the end of the current window in epoch seconds,
// rounded down) on every response, and Retry-After on a 429 that is always
// the whole window in seconds, however soon room comes back.
// PublishRetryAfter keeps only Retry-After; PublishNone turns every header
// off, Retry-After too.
//
// Allowance: the greedy client has Units at once in the first window, then
// the estimate lets it have them again at the rate the previous window's
// weight decays, Units a window: Units × max(1, d / Window), to within a
// unit of rounding.
func HTTPRate(l Limit, h Headers) ServerSpec {
	return ServerSpec{
		Name: "go-chi/httprate", Kind: SlidingCounter, Limit: l, Headers: h,
		Start: func(context.Context) (*Server, error) {
			if err := checkLimit("go-chi/httprate", l); err != nil {
				return nil, err
			}
			var names httprate.ResponseHeaders
			switch h {
			case PublishXRateLimit:
				names = httprate.ResponseHeaders{Limit: "X-RateLimit-Limit", Remaining: "X-RateLimit-Remaining",
					Increment: "X-RateLimit-Increment", Reset: "X-RateLimit-Reset", RetryAfter: "Retry-After"}
			case PublishRetryAfter:
				names = httprate.ResponseHeaders{RetryAfter: "Retry-After"}
			case PublishNone:
			default:
				return nil, fmt.Errorf("go-chi/httprate: headers %q: it can publish %q, %q or %q",
					h, PublishXRateLimit, PublishRetryAfter, PublishNone)
			}
			rl := httprate.NewRateLimiter(l.Units, l.Window,
				httprate.WithKeyFuncs(httprate.Key("all")), httprate.WithResponseHeaders(names))
			return serveLoopback(rl.Handler(okHandler), nil)
		},
		Allowance: func(d time.Duration) float64 {
			return float64(l.Units) * max(1, d.Seconds()/l.Window.Seconds())
		},
	}
}

// Ulule is ulule/limiter v3.11.2's stdlib middleware over its memory
// store: a fixed window that opens at the first request after the last
// one expired (not on a clock boundary) and lasts l.Window. Every request
// adds one to the window's count, refused ones too; a request is refused
// (429, body "Limit exceeded") when the count it makes is above Units.
//
// Headers (PublishXRateLimit), on every response: X-RateLimit-Limit,
// X-RateLimit-Remaining (Units − count, at least 0), X-RateLimit-Reset (the
// window's end in epoch seconds, rounded down). No Retry-After.
//
// The store is made without its cleaner: the cleaner is a goroutine that
// only a garbage collection stops, and one key needs no cleaning.
//
// Allowance: the greedy client has Units at the start of each window, and
// a window opens at once when the last one ends: Units × ⌈d / Window⌉.
func Ulule(l Limit) ServerSpec {
	return ServerSpec{
		Name: "ulule/limiter", Kind: FixedWindow, Limit: l, Headers: PublishXRateLimit,
		Start: func(context.Context) (*Server, error) {
			if err := checkLimit("ulule/limiter", l); err != nil {
				return nil, err
			}
			store := memory.NewStoreWithOptions(limiter.StoreOptions{Prefix: "acceptance"})
			lim := limiter.New(store, limiter.Rate{Period: l.Window, Limit: int64(l.Units)})
			mw := stdlib.NewMiddleware(lim,
				stdlib.WithKeyGetter(func(*http.Request) string { return "all" }),
				// Its default error handler panics; the memory store never
				// fails, but a server here answers 500 rather than panic.
				stdlib.WithErrorHandler(func(w http.ResponseWriter, _ *http.Request, err error) {
					http.Error(w, err.Error(), http.StatusInternalServerError)
				}))
			return serveLoopback(mw.Handler(okHandler), nil)
		},
		Allowance: func(d time.Duration) float64 {
			return float64(l.Units) * math.Ceil(d.Seconds()/l.Window.Seconds())
		},
	}
}

// Tollbooth is didip/tollbooth v7.0.2's LimitHandler: a token bucket
// (its own copy of x/time/rate) of l.PerSecond() tokens a second, starting
// full, holding l.Burst tokens, or tollbooth's default of max(1,
// ⌊rate⌋) when l.Burst is 0. A refused request (429, "You have reached
// maximum request limit.") takes no token.
//
// Headers (PublishDraft6), on every response: RateLimit-Limit (the rate a
// second, rounded), RateLimit-Remaining (whole tokens left after this
// request; 0 on a refusal), RateLimit-Reset always "1", and its own
// X-Rate-Limit-Limit (the rate, two decimals), X-Rate-Limit-Duration "1"
// and X-Rate-Limit-Request-Remote-Addr. No RateLimit-Policy, no
// Retry-After. Reset "1" says the quota is whole again in a second, which
// holds only when the bucket refills within a second (Burst ≤ rate).
//
// Allowance: the burst at once, then the rate: Burst + rate × d.
func Tollbooth(l Limit) ServerSpec {
	l.Burst = tollboothBurst(l)
	return ServerSpec{
		Name: "didip/tollbooth", Kind: TokenBucket, Limit: l, Headers: PublishDraft6,
		Start: func(context.Context) (*Server, error) {
			if err := checkLimit("didip/tollbooth", l); err != nil {
				return nil, err
			}
			lmt := tollbooth.NewLimiter(l.PerSecond(), nil)
			lmt.SetBurst(l.Burst)
			// The loopback client's address is the key; no proxy headers.
			lmt.SetIPLookups([]string{"RemoteAddr"})
			return serveLoopback(tollbooth.LimitHandler(lmt, okHandler), nil)
		},
		Allowance: func(d time.Duration) float64 {
			return float64(l.Burst) + l.PerSecond()*d.Seconds()
		},
	}
}

// tollboothBurst is l.Burst, or what tollbooth.NewLimiter would choose:
// max(1, ⌊rate a second⌋).
func tollboothBurst(l Limit) int {
	if l.Burst > 0 || l.Window <= 0 {
		return l.Burst
	}
	return int(math.Max(1, l.PerSecond()))
}
