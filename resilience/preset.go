package resilience

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
	"github.com/headroom-go/headroom/internal/problems"
)

// HTTP returns a new policy for calls over HTTP, adjusted by opts, with a
// breaker and a budget of its own unless opts replace them. Make one per
// dependency and keep it. Its values are Polly v8's standard pipeline
// (Microsoft.Extensions.Http.Resilience's HttpStandardResilienceOptions)
// with Finagle's retry budget:
//
//	Name              "http"
//	Retries           3      (Polly: MaxRetryAttempts 3)
//	Timeout           30 s   (Polly: TotalRequestTimeout)
//	AttemptTimeout    10 s   (Polly: AttemptTimeout)
//	Backoff           2 s × 2ⁿ ± 25 %, ≤ 60 s   (Polly: Delay 2 s, exponential, jitter)
//	ThrottledBackoff  4 s × 2ⁿ ± 20 %, ≤ 60 s   (Options.ThrottledBackoff's default)
//	MaximumDelay      60 s
//	Breaker           BreakerOptions{}: ratio 0.1, ≥ 100 calls in 30 s, open 5 s (Polly)
//	Budget            BudgetOptions{}: 20 % of calls + 10/s over 10 s (Finagle)
//	Classify          DefaultClassify
//
// The preset with any one option is a working policy: the values that
// depend on others follow what the options set, so that they keep the
// rules of Polly's validator:
//
//   - AttemptTimeout, unless an option sets it, is at most a third of
//     Timeout (Polly's 10 s of 30 s), and at most half the SamplingDuration
//     of a ratio-mode breaker given by WithBreaker;
//   - Timeout, unless an option sets it, is at least three AttemptTimeouts;
//   - the preset's own breaker samples over at least two AttemptTimeouts.
//
// Options that conflict, such as WithTimeout(2*time.Second) with
// WithAttemptTimeout(5*time.Second), are reported all at once (errors.Join
// of *headroom.ConfigError), with a nil policy.
//
// Polly's standard pipeline also holds a rate limiter (1000 concurrent);
// here limiters go inside the callback, one permit per attempt.
func HTTP(opts ...Option) (*Policy, error) { return build(httpPreset, opts) }

// httpPreset is HTTP's values before its options.
var httpPreset = Options{
	Name:           "http",
	Retries:        3,
	Timeout:        headroom.Duration(30 * time.Second),
	AttemptTimeout: headroom.Duration(10 * time.Second),
	// Polly's exponential jitter is "decorrelated jitter V2", which
	// cenkalti/backoff does not offer; ±25 % is Polly's jitter for its
	// constant and linear curves.
	Backoff:          headroom.Backoff{Initial: headroom.Duration(2 * time.Second), Multiplier: 2, Jitter: new(0.25), Max: headroom.Duration(time.Minute)},
	ThrottledBackoff: throttledCurve(),
	MaximumDelay:     headroom.Duration(time.Minute),
}

// Default returns a new policy for calls that are not HTTP, adjusted by
// opts: as HTTP, but named "default", with no timeouts of its own (the
// caller's context bounds the call, as with Polly's bare retry) and the
// Transient curve of cenkalti/backoff/v4 (500 ms × 1.5ⁿ ± 50 %, ≤ 60 s).
// Like HTTP, it is meant to be kept, one per dependency.
func Default(opts ...Option) (*Policy, error) {
	return build(Options{Name: "default", Retries: 3, MaximumDelay: headroom.Duration(time.Minute),
		Backoff: transientCurve(), ThrottledBackoff: throttledCurve()}, opts)
}

// An Option adjusts a preset: HTTP or Default.
type Option func(*preset)

// preset is a preset's options being adjusted, and which of those the
// options set: the values that depend on them follow them.
type preset struct {
	o     Options
	given uint8
}

const (
	givenTimeout uint8 = 1 << iota
	givenAttemptTimeout
	givenBreaker
	givenBudget
)

// WithName names the policy (and the preset's breaker) in telemetry.
func WithName(name string) Option { return func(p *preset) { p.o.Name = name } }

// WithRetries sets Options.Retries.
func WithRetries(n int) Option { return func(p *preset) { p.o.Retries = n } }

// WithTimeout sets Options.Timeout; 0 means none.
func WithTimeout(d time.Duration) Option {
	return func(p *preset) { p.o.Timeout, p.given = headroom.Duration(d), p.given|givenTimeout }
}

// WithAttemptTimeout sets Options.AttemptTimeout; 0 means none.
func WithAttemptTimeout(d time.Duration) Option {
	return func(p *preset) {
		p.o.AttemptTimeout, p.given = headroom.Duration(d), p.given|givenAttemptTimeout
	}
}

// WithBackoff sets the Transient curve, Options.Backoff; a zero field of b
// keeps the preset's value.
func WithBackoff(b headroom.Backoff) Option {
	return func(p *preset) { p.o.Backoff = backoffcurve.WithDefaults(b, p.o.Backoff) }
}

// WithThrottledBackoff sets the Throttled curve, Options.ThrottledBackoff; a
// zero field of b keeps the preset's value.
func WithThrottledBackoff(b headroom.Backoff) Option {
	return func(p *preset) { p.o.ThrottledBackoff = backoffcurve.WithDefaults(b, p.o.ThrottledBackoff) }
}

// WithMaximumDelay sets Options.MaximumDelay; 0 means no cap.
func WithMaximumDelay(d time.Duration) Option {
	return func(p *preset) { p.o.MaximumDelay = headroom.Duration(d) }
}

// WithClassifier sets Options.Classify.
func WithClassifier(c func(err error) Verdict) Option { return func(p *preset) { p.o.Classify = c } }

// WithBreaker uses b instead of the preset's own breaker; nil means none.
func WithBreaker(b *Breaker) Option {
	return func(p *preset) { p.o.Breaker, p.given = b, p.given|givenBreaker }
}

// WithBudget uses b instead of the preset's own budget; nil means none.
func WithBudget(b *Budget) Option {
	return func(p *preset) { p.o.Budget, p.given = b, p.given|givenBudget }
}

// WithMeterProvider sends the policy's (and the preset breaker's) metrics
// to mp.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(p *preset) { p.o.MeterProvider = mp }
}

// WithOptions applies o to the preset: every field o sets, as a JSON
// configuration's "resilience" section does (see Options). It checks
// nothing itself: the preset reports every problem of the values it ends
// with.
func WithOptions(o Options) Option {
	return func(p *preset) {
		if o.Name != "" {
			p.o.Name = o.Name
		}
		if o.Retries != 0 {
			p.o.Retries = max(o.Retries, 0)
		}
		if o.Timeout != 0 {
			WithTimeout(max(time.Duration(o.Timeout), 0))(p)
		}
		if o.AttemptTimeout != 0 {
			WithAttemptTimeout(max(time.Duration(o.AttemptTimeout), 0))(p)
		}
		WithBackoff(o.Backoff)(p)
		WithThrottledBackoff(o.ThrottledBackoff)(p)
		if o.MaximumDelay != 0 {
			p.o.MaximumDelay = max(o.MaximumDelay, 0)
		}
		if o.Classify != nil {
			p.o.Classify = o.Classify
		}
		if o.Breaker != nil || o.NoBreaker {
			WithBreaker(o.Breaker)(p)
		}
		if o.Budget != nil || o.NoBudget {
			WithBudget(o.Budget)(p)
		}
		if o.MeterProvider != nil {
			p.o.MeterProvider = o.MeterProvider
		}
	}
}

// build is HTTP and Default: base adjusted by opts, the dependent values
// derived, and the preset's own breaker and budget added once the options
// are known to be valid.
func build(base Options, opts []Option) (*Policy, error) {
	p := preset{o: base}
	for _, opt := range opts {
		if opt != nil {
			opt(&p)
		}
	}
	o := p.derived()
	l := problems.New("resilience")
	if o.checkValues(l); l.Len() > 0 {
		return nil, l.Err()
	}
	if p.given&givenBreaker == 0 {
		br, err := NewBreaker(BreakerOptions{
			Name:             o.Name,
			SamplingDuration: max(breakerSamplingDuration, 2*time.Duration(o.AttemptTimeout)),
			MeterProvider:    o.MeterProvider,
		})
		if err != nil { // an AttemptTimeout so long that twice it overflows
			return nil, err
		}
		o.Breaker = br
	}
	if p.given&givenBudget == 0 {
		o.Budget, _ = NewBudget(BudgetOptions{}) // valid: Finagle's defaults
	}
	return newPolicy(o), nil
}

// derived returns the preset's options with the values that depend on
// those the options set made to fit them (see HTTP).
func (p *preset) derived() Options {
	o := p.o
	if at := time.Duration(o.AttemptTimeout); p.given&givenAttemptTimeout == 0 && at > 0 {
		if o.Timeout > 0 {
			at = min(at, time.Duration(o.Timeout)/3)
		}
		if br := o.Breaker; br != nil && br.opts.ratioMode() {
			at = min(at, br.opts.SamplingDuration/2)
		}
		o.AttemptTimeout = headroom.Duration(at)
	}
	if p.given&givenTimeout == 0 && p.given&givenAttemptTimeout != 0 && o.Timeout > 0 {
		o.Timeout = max(o.Timeout, 3*o.AttemptTimeout)
	}
	return o
}
