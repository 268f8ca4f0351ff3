package acceptance

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Kind is the algorithm a server limits with.
type Kind string

// The kinds of server-side limiter the suite meets.
const (
	FixedWindow    Kind = "fixed-window"    // a count per aligned window, all back at its end
	SlidingLog     Kind = "sliding-log"     // every accepted request kept until it leaves the window
	SlidingCounter Kind = "sliding-counter" // this window's count plus the last one's, weighted
	TokenBucket    Kind = "token-bucket"    // a bucket of Burst refilled at Units per Window (GCRA too)
	LeakyBucket    Kind = "leaky-bucket"    // nginx limit_req: a rate with a burst of excess, nodelay or delay
)

// Headers says what a server publishes about its limit.
type Headers string

// What servers publish.
const (
	PublishNone       Headers = "none"        // nothing, not even Retry-After
	PublishRetryAfter Headers = "retry-after" // Retry-After on a refusal only
	PublishDraft6     Headers = "draft-6"     // RateLimit-Limit, -Remaining, -Reset (delta seconds), RateLimit-Policy
	PublishDraft7     Headers = "draft-7"     // RateLimit: limit=, remaining=, reset=; RateLimit-Policy
	PublishDraft8     Headers = "draft-8"     // RateLimit: "name";r=;t=, RateLimit-Policy: "name";q=;w=
	PublishXRateLimit Headers = "x-ratelimit" // X-RateLimit-Limit, -Remaining, -Reset (epoch seconds)
	PublishDraft3     Headers = "draft-3"     // RateLimit-Limit, -Remaining, -Reset (delta seconds), no policy
	PublishEnvoy      Headers = "envoy"       // X-RateLimit-Limit, -Remaining, -Reset (delta seconds), no Retry-After
)

// Published reports whether h tells the client its quota (more than a
// Retry-After).
func (h Headers) Published() bool { return h != PublishNone && h != PublishRetryAfter }

// Limit is a server-side limit: Units per Window. Burst is a bucket's
// depth (TokenBucket: its capacity; LeakyBucket: nginx's burst, the excess
// it takes beyond the rate). Delay is nginx's delay= (0 with NoDelay:
// nodelay; both unset: requests beyond the rate are delayed, nginx's default).
type Limit struct {
	Units   int
	Window  time.Duration
	Burst   int
	NoDelay bool
	Delay   int
}

// PerSecond is the limit's long-run rate in units a second.
func (l Limit) PerSecond() float64 { return float64(l.Units) / l.Window.Seconds() }

func (l Limit) String() string {
	s := fmt.Sprintf("%d/%s", l.Units, l.Window)
	if l.Burst > 0 {
		s += fmt.Sprintf(" burst %d", l.Burst)
	}
	return s
}

// CostHeader carries a request's cost in units (a decimal integer, default
// 1). The servers that count units read it; the clients' cost estimators
// read it too.
const CostHeader = "X-Cost"

// Server is a rate-limited server running on loopback.
type Server struct {
	URL   string // base URL, http://127.0.0.1:port; requests go to URL + "/"
	Close func() error
}

// A ServerSpec describes one server of a cell and starts it.
type ServerSpec struct {
	Name    string // e.g. "nginx limit_req", "go-chi/httprate"
	Kind    Kind
	Limit   Limit
	Headers Headers
	// Costs says the server counts CostHeader's units; otherwise every
	// request is one unit to it and cells give it cost 1 only.
	Costs bool
	// Start starts a fresh server (a fresh quota) on a free loopback port.
	// It returns a *SkipError when something it needs is not installed and
	// cannot be.
	Start func(ctx context.Context) (*Server, error)
	// Allowance is the most units an ideal client could have had accepted
	// over a run of d that began with the server fresh: the yardstick of
	// "share of the allowance".
	Allowance func(d time.Duration) float64
}

// SkipError says why a cell could not run: what is missing and why it
// could not be installed.
type SkipError struct{ Why string }

func (e *SkipError) Error() string { return "skipped: " + e.Why }

// IsSkip reports whether err says a cell was skipped.
func IsSkip(err error) bool {
	var s *SkipError
	return errors.As(err, &s)
}
