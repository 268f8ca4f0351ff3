package resilience

import (
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
	"github.com/headroom-go/headroom/internal/problems"
)

// Options are the settings of a policy, given to a preset, HTTP or Default,
// as the JSON configuration reads them too (httpx.Config's "resilience"
// section). Every zero field keeps the preset's value, so the zero Options
// is the preset itself; below 0, Retries, Timeout, AttemptTimeout
// and MaximumDelay mean none (no retry, no timeout, no cap), and NoBreaker
// and NoBudget leave out the preset's own breaker and budget. Options read
// from JSON with the names in their tags and durations as strings ("30s").
// Each field's comment says what its value does once applied.
type Options struct {
	// Name names the policy in telemetry; name it after the dependency it
	// guards.
	Name string `json:"name,omitempty"`

	// Retries is how many times a failed attempt may be retried: a call
	// makes at most 1 + Retries attempts. Below 0, none.
	Retries int `json:"retries,omitempty"`

	// Timeout bounds the whole call, attempts and delays together, measured
	// from when Run starts. Below 0, none: only the caller's context bounds
	// the call. The overall deadline is the sooner of this and the caller's
	// context deadline; the runner never sleeps past it.
	Timeout headroom.Duration `json:"timeout,omitempty"`

	// AttemptTimeout bounds each attempt. The attempt's context ends at
	// min(AttemptTimeout, time left on the overall deadline) and is linked
	// with the caller's. An attempt that runs out its own timeout is
	// Transient (*TimeoutError). Below 0, none. At most Timeout (Polly's
	// HttpStandardResilienceOptions validator).
	AttemptTimeout headroom.Duration `json:"attemptTimeout,omitempty"`

	// Backoff is the curve for Transient failures; its zero fields keep the
	// preset's (HTTP's says; Default's is github.com/cenkalti/backoff/v4's:
	// Initial 500 ms, Multiplier 1.5, Jitter 0.5, Max 60 s).
	Backoff headroom.Backoff `json:"backoff,omitzero"`

	// ThrottledBackoff is the curve for Throttled failures: longer, because
	// the dependency (or our own limiter) is defending itself; a Verdict's
	// RetryAfter replaces it. The presets' is Initial 4 s, Multiplier
	// 2, Jitter 0.2, Max 60 s: the exponential backoff rate-limited APIs
	// (GitHub, Microsoft Graph) ask of throttled clients, starting at twice
	// the HTTP preset's transient start, so that at every step a throttle
	// waits longer than a transient failure would.
	ThrottledBackoff headroom.Backoff `json:"throttledBackoff,omitzero"`

	// MaximumDelay caps every delay, a RetryAfter hint included (as is the
	// time left on the deadline; Polly does not cap a Retry-After, we do).
	// Below 0, no cap.
	MaximumDelay headroom.Duration `json:"maximumDelay,omitempty"`

	// Classify maps an attempt's error to a verdict. It is called only for
	// a non-nil error, must be safe for concurrent use and should not
	// block; nil means DefaultClassify, which a custom one can fall back
	// to.
	Classify func(err error) Verdict `json:"-"`

	// Breaker, if not nil, guards the dependency instead of the preset's
	// own. Share one per dependency.
	// A ratio-mode breaker's SamplingDuration must be at least twice
	// AttemptTimeout (Polly's validator again: a window shorter than two
	// attempts cannot see a failure rate).
	Breaker *Breaker `json:"-"`

	// Budget, if not nil, bounds retries as a fraction of the dependency's
	// traffic instead of the preset's own. Share one per dependency.
	Budget *Budget `json:"-"`

	// NoBreaker and NoBudget leave out the preset's own circuit breaker
	// and retry budget; each excludes the field beside it.
	NoBreaker bool `json:"noBreaker,omitempty"`
	NoBudget  bool `json:"noBudget,omitempty"`

	// MeterProvider receives the runner's metrics; nil means the global
	// meter provider.
	MeterProvider metric.MeterProvider `json:"-"`

	// Logger receives the runner's notable events: a retry the budget
	// refused, at Warn, repeats summarised once a minute. nil logs
	// nothing. A run that succeeds logs nothing.
	Logger *slog.Logger `json:"-"`
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

// Validate returns every problem with o at once, joined with errors.Join;
// each is a *headroom.ConfigError naming the field. It returns nil when
// HTTP(o) would succeed: the values that depend on the ones o sets follow
// them, as HTTP says.
func (o *Options) Validate() error {
	l := problems.New("resilience")
	o.check(l)
	return l.Err()
}

// check records on l the problems of o applied to the HTTP preset.
func (o *Options) check(l *problems.List) {
	o.checkChoices(l)
	p := preset{o: httpPreset}
	p.apply(*o)
	d := p.derived()
	d.checkValues(l)
}

// checkChoices records on l the settings of o that exclude each other.
func (o *Options) checkChoices(l *problems.List) {
	if o.NoBreaker && o.Breaker != nil {
		l.Add("NoBreaker", true, "false when Breaker is set: one breaker or none, never a silent pick")
	}
	if o.NoBudget && o.Budget != nil {
		l.Add("NoBudget", true, "false when Budget is set: one budget or none, never a silent pick")
	}
}

// The check of the options other packages' options hold.
func init() { problems.Register((*Options).check) }

// checkValues records on l the problems of o as a policy's values, where 0
// means none. The Breaker and the Budget validated their own options when
// built.
func (o *Options) checkValues(l *problems.List) {
	if o.Retries < 0 {
		l.Add("Retries", o.Retries, "0 or more")
	}
	if o.Timeout < 0 {
		l.Add("Timeout", o.Timeout, "0 (none) or a duration above 0")
	}
	if o.AttemptTimeout < 0 {
		l.Add("AttemptTimeout", o.AttemptTimeout, "0 (none) or a duration above 0")
	}
	if o.Timeout > 0 && o.AttemptTimeout > o.Timeout {
		l.Add("AttemptTimeout", o.AttemptTimeout, "at most Timeout ("+o.Timeout.String()+")")
	}
	if o.MaximumDelay < 0 {
		l.Add("MaximumDelay", o.MaximumDelay, "0 (no cap) or a duration above 0")
	}
	backoffcurve.Check(o.Backoff, l.At("Backoff"))
	backoffcurve.Check(o.ThrottledBackoff, l.At("ThrottledBackoff"))
	if b := o.Breaker; b != nil && b.opts.ratioMode() && o.AttemptTimeout > 0 && b.opts.SamplingDuration < 2*time.Duration(o.AttemptTimeout) {
		l.Add("Breaker.SamplingDuration", b.opts.SamplingDuration, "at least twice AttemptTimeout ("+(2*o.AttemptTimeout).String()+")")
	}
}
