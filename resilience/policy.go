package resilience

import (
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/telemetry"
)

// A Policy is how Run calls a dependency: retries, curves, timeouts,
// breaker and budget. It is immutable and safe for concurrent use; build it
// once per dependency with New, HTTP or Default, and keep it: the breaker
// and the budget are its memory.
type Policy struct {
	err      error
	name     string
	retries  int
	classify func(error) Verdict
	breaker  *Breaker
	budget   *Budget
	tel      *telemetry.Runner

	timeout, attemptTimeout, maximumDelay time.Duration
	transient, throttled                  headroom.Backoff // defaults filled in
}

// New returns a policy with options o, or o's problems, all at once
// (errors.Join of *headroom.ConfigError). With an error the policy is still
// not nil: it refuses every Run with that error, and httpx.WithResilience
// refuses it when the client is built, so a caller that ignores the error
// still fails loudly, before the first call.
func New(o Options) (*Policy, error) {
	if err := o.validate(); err != nil {
		return &Policy{err: err, name: o.Name}, err
	}
	p := &Policy{
		name:           o.Name,
		retries:        o.Retries,
		classify:       o.Classify,
		breaker:        o.Breaker,
		budget:         o.Budget,
		tel:            telemetry.NewRunner(o.MeterProvider, o.Name),
		timeout:        time.Duration(o.Timeout),
		attemptTimeout: time.Duration(o.AttemptTimeout),
		maximumDelay:   time.Duration(o.MaximumDelay),
		transient:      o.Backoff.WithDefaults(transientCurve()),
		throttled:      o.ThrottledBackoff.WithDefaults(throttledCurve()),
	}
	if p.classify == nil {
		p.classify = DefaultClassify
	}
	return p, nil
}

// Err is the problems New (or HTTP, or Default) found with the policy's
// options, or nil.
func (p *Policy) Err() error { return p.err }
