package resilience

import (
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
)

// Options configure a Policy built by New; the presets HTTP and Default
// take Option values instead. The zero Options is a complete
// configuration: one attempt, no timeout, no breaker, no budget. It reads
// from JSON with the names in its tags and durations as strings ("30s").
type Options struct {
	// Name names the policy in telemetry; name it after the dependency it
	// guards.
	Name string `json:"name,omitempty"`

	// Retries is how many times a failed attempt may be retried: a call
	// makes at most 1 + Retries attempts. 0 or more.
	Retries int `json:"retries,omitempty"`

	// Timeout bounds the whole call, attempts and delays together, measured
	// from when Run starts. 0 means none: only the caller's context bounds
	// the call. The overall deadline is the sooner of this and the caller's
	// context deadline; the runner never sleeps past it.
	Timeout headroom.Duration `json:"timeout,omitempty"`

	// AttemptTimeout bounds each attempt. The attempt's context ends at
	// min(AttemptTimeout, time left on the overall deadline) and is linked
	// with the caller's. An attempt that runs out its own timeout is
	// Transient (*TimeoutError). 0 means none. At most Timeout (Polly's
	// HttpStandardResilienceOptions validator).
	AttemptTimeout headroom.Duration `json:"attemptTimeout,omitempty"`

	// Backoff is the curve for Transient failures. Its zero fields take
	// github.com/cenkalti/backoff/v4's defaults: Initial 500 ms, Multiplier
	// 1.5, Jitter 0.5, Max 60 s.
	Backoff headroom.Backoff `json:"backoff,omitzero"`

	// ThrottledBackoff is the curve for Throttled failures: longer, because
	// the dependency (or our own limiter) is defending itself; a Verdict's
	// RetryAfter replaces it. Its zero fields mean Initial 4 s, Multiplier
	// 2, Jitter 0.2, Max 60 s: the exponential backoff rate-limited APIs
	// (GitHub, Microsoft Graph) ask of throttled clients, starting at twice
	// the HTTP preset's transient start, so that at every step a throttle
	// waits longer than a transient failure would.
	ThrottledBackoff headroom.Backoff `json:"throttledBackoff,omitzero"`

	// MaximumDelay caps every delay, a RetryAfter hint included (as is the
	// time left on the deadline; Polly does not cap a Retry-After, we do).
	// 0 means no cap.
	MaximumDelay headroom.Duration `json:"maximumDelay,omitempty"`

	// Classify maps an attempt's error to a verdict. It is called only for
	// a non-nil error, must be safe for concurrent use and should not
	// block; nil means DefaultClassify, which a custom one can fall back
	// to.
	Classify func(err error) Verdict `json:"-"`

	// Breaker, if not nil, guards the dependency. Share one per dependency.
	// A ratio-mode breaker's SamplingDuration must be at least twice
	// AttemptTimeout (Polly's validator again: a window shorter than two
	// attempts cannot see a failure rate).
	Breaker *Breaker `json:"-"`

	// Budget, if not nil, bounds retries as a fraction of the dependency's
	// traffic. Share one per dependency.
	Budget *Budget `json:"-"`

	// MeterProvider receives the runner's metrics; nil means the global
	// meter provider.
	MeterProvider metric.MeterProvider `json:"-"`
}

// transientCurve is what the zero fields of Options.Backoff mean.
func transientCurve() headroom.Backoff {
	return headroom.Backoff{
		Initial:    headroom.Duration(backoff.DefaultInitialInterval),
		Multiplier: backoff.DefaultMultiplier,
		Jitter:     new(backoff.DefaultRandomizationFactor),
		Max:        headroom.Duration(backoff.DefaultMaxInterval),
	}
}

// throttledCurve is what the zero fields of Options.ThrottledBackoff mean.
func throttledCurve() headroom.Backoff {
	return headroom.Backoff{
		Initial:    headroom.Duration(4 * time.Second),
		Multiplier: 2,
		Jitter:     new(0.2),
		Max:        headroom.Duration(60 * time.Second),
	}
}

// validate lists every problem with o at once (errors.Join of
// *headroom.ConfigError), or returns nil. The Breaker and the Budget
// validated their own options when built.
func (o *Options) validate() error {
	var p problems
	p.add(o.Retries < 0, "Retries", o.Retries, "0 or more")
	p.add(o.Timeout < 0, "Timeout", o.Timeout, "0 (none) or a duration above 0")
	p.add(o.AttemptTimeout < 0, "AttemptTimeout", o.AttemptTimeout, "0 (none) or a duration above 0")
	p.add(o.Timeout > 0 && o.AttemptTimeout > o.Timeout, "AttemptTimeout", o.AttemptTimeout,
		"at most Timeout ("+o.Timeout.String()+")")
	p.add(o.MaximumDelay < 0, "MaximumDelay", o.MaximumDelay, "0 (no cap) or a duration above 0")
	p.errs = append(p.errs, backoffcurve.Problems("resilience", "Backoff", o.Backoff)...)
	p.errs = append(p.errs, backoffcurve.Problems("resilience", "ThrottledBackoff", o.ThrottledBackoff)...)
	if b := o.Breaker; b != nil && b.opts.ratioMode() {
		p.add(o.AttemptTimeout > 0 && b.opts.SamplingDuration < 2*time.Duration(o.AttemptTimeout),
			"Breaker.SamplingDuration", b.opts.SamplingDuration, "at least twice AttemptTimeout ("+(2*o.AttemptTimeout).String()+")")
	}
	return p.err()
}
