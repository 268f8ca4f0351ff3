package resilience

import (
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
	"github.com/headroom-go/headroom/internal/problems"
)

// HTTP returns a new policy for calls over HTTP: the preset below with
// every setting o gives replaced (a zero field keeps the preset's value;
// see Options), and a breaker and a budget of its own unless o replaces or
// leaves them out. Make one per dependency and keep it. Its values are
// Polly v8's standard pipeline (Microsoft.Extensions.Http.Resilience's
// HttpStandardResilienceOptions) with Finagle's retry budget:
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
// The preset with any one setting is a working policy: the values that
// depend on others follow what o sets, so that they keep the rules of
// Polly's validator:
//
//   - AttemptTimeout, unless o sets it, is at most a third of Timeout
//     (Polly's 10 s of 30 s), and at most half the SamplingDuration of a
//     ratio-mode breaker o gives;
//   - Timeout, unless o sets it, is at least three AttemptTimeouts;
//   - the preset's own breaker samples over at least two AttemptTimeouts.
//
// Settings that conflict, such as a Timeout of 2 s with an AttemptTimeout
// of 5 s, are reported all at once (errors.Join of *headroom.ConfigError),
// with a nil policy.
//
// Polly's standard pipeline also holds a rate limiter (1000 concurrent);
// here limiters go inside the callback, one permit per attempt.
func HTTP(o Options) (*Policy, error) { return build(httpPreset, o) }

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

// Default returns a new policy for calls that are not HTTP, with the
// settings o gives: as HTTP, but named "default", with no timeouts of its
// own (the caller's context bounds the call, as with Polly's bare retry)
// and the Transient curve of cenkalti/backoff/v4 (500 ms × 1.5ⁿ ± 50 %,
// ≤ 60 s). Like HTTP, it is meant to be kept, one per dependency.
func Default(o Options) (*Policy, error) {
	return build(Options{Name: "default", Retries: 3, MaximumDelay: headroom.Duration(time.Minute),
		Backoff: transientCurve(), ThrottledBackoff: throttledCurve()}, o)
}

// preset is a preset's values being adjusted, and which of them the
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

// apply sets every value o gives (see Options).
func (p *preset) apply(o Options) {
	if o.Name != "" {
		p.o.Name = o.Name
	}
	if o.Retries != 0 {
		p.o.Retries = max(o.Retries, 0)
	}
	if o.Timeout != 0 {
		p.o.Timeout, p.given = max(o.Timeout, 0), p.given|givenTimeout
	}
	if o.AttemptTimeout != 0 {
		p.o.AttemptTimeout, p.given = max(o.AttemptTimeout, 0), p.given|givenAttemptTimeout
	}
	p.o.Backoff = backoffcurve.WithDefaults(o.Backoff, p.o.Backoff)
	p.o.ThrottledBackoff = backoffcurve.WithDefaults(o.ThrottledBackoff, p.o.ThrottledBackoff)
	if o.MaximumDelay != 0 {
		p.o.MaximumDelay = max(o.MaximumDelay, 0)
	}
	if o.Classify != nil {
		p.o.Classify = o.Classify
	}
	if o.Breaker != nil || o.NoBreaker {
		p.o.Breaker, p.given = o.Breaker, p.given|givenBreaker
	}
	if o.Budget != nil || o.NoBudget {
		p.o.Budget, p.given = o.Budget, p.given|givenBudget
	}
	if o.MeterProvider != nil {
		p.o.MeterProvider = o.MeterProvider
	}
}

// build is HTTP and Default: base adjusted by o, the dependent values
// derived, and the preset's own breaker and budget added once the values
// are known to be valid.
func build(base, o Options) (*Policy, error) {
	p := preset{o: base}
	p.apply(o)
	d := p.derived()
	l := problems.New("resilience")
	o.checkChoices(l)
	if d.checkValues(l); l.Len() > 0 {
		return nil, l.Err()
	}
	if p.given&givenBreaker == 0 {
		br, err := NewBreaker(BreakerOptions{
			Name:             d.Name,
			SamplingDuration: max(breakerSamplingDuration, 2*time.Duration(d.AttemptTimeout)),
			MeterProvider:    d.MeterProvider,
		})
		if err != nil { // an AttemptTimeout so long that twice it overflows
			return nil, err
		}
		d.Breaker = br
	}
	if p.given&givenBudget == 0 {
		d.Budget, _ = NewBudget(BudgetOptions{}) // valid: Finagle's defaults
	}
	return newPolicy(d), nil
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
