package resilience

import (
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
	"github.com/headroom-go/headroom/internal/metrics"
)

// A Policy is how Run calls a dependency: retries, curves, timeouts,
// breaker and budget. It is immutable and safe for concurrent use; build it
// once per dependency with HTTP or Default, and keep it: the breaker and
// the budget are its memory.
type Policy struct {
	name     string
	retries  int
	classify func(error) Verdict
	breaker  *Breaker
	budget   *Budget
	tel      *metrics.Runner

	timeout, attemptTimeout, maximumDelay time.Duration
	transient, throttled                  headroom.Backoff // defaults filled in
}

// newPolicy is the policy of o's values, valid and derived (build).
func newPolicy(o Options) *Policy {
	p := &Policy{
		name:           o.Name,
		retries:        o.Retries,
		classify:       o.Classify,
		breaker:        o.Breaker,
		budget:         o.Budget,
		tel:            metrics.NewRunner(o.MeterProvider, o.Name),
		timeout:        time.Duration(o.Timeout),
		attemptTimeout: time.Duration(o.AttemptTimeout),
		maximumDelay:   time.Duration(o.MaximumDelay),
		transient:      backoffcurve.WithDefaults(o.Backoff, transientCurve()),
		throttled:      backoffcurve.WithDefaults(o.ThrottledBackoff, throttledCurve()),
	}
	if p.classify == nil {
		p.classify = DefaultClassify
	}
	p.tel.Log(o.Logger, o.Name)
	return p
}
