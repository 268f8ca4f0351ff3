package resilience

import (
	"cmp"
	"log/slog"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
	"go.opentelemetry.io/otel/metric"
)

// BreakerOptions configure a Breaker. The zero value is a complete
// configuration: Polly v8's circuit breaker, which
// Microsoft.Extensions.Http.Resilience's standard pipeline keeps (break
// when 10 % of at least 100 calls in the last 30 s failed, stay open 5 s).
// Zero fields mean the defaults given beside them.
//
// There are two modes. The ratio mode, the default, breaks when, among at
// least MinimumThroughput calls in the last SamplingDuration, FailureRatio
// of them failed (Polly's "advanced" breaker). ConsecutiveFailures above 0
// selects the consecutive mode instead: the breaker opens after that many
// Transient failures in a row, and the ratio fields must be left 0.
type BreakerOptions struct {
	// Name names the breaker in errors and telemetry.
	Name string

	// ConsecutiveFailures selects the consecutive mode: the breaker opens
	// after this many failures in a row. A success resets the count. 0, the
	// default, is the ratio mode.
	ConsecutiveFailures int

	// FailureRatio is the fraction of failures, in (0, 1], among the calls
	// in the sampling window at which the breaker opens. Default 0.1.
	FailureRatio float64
	// MinimumThroughput is how many calls the window must hold before the
	// ratio counts; at least 2 (Polly's minimum). Default 100.
	MinimumThroughput int
	// SamplingDuration is the window, which slides in 10 sub-windows (one
	// window under 200 ms, as Polly does). Default 30 s. A policy also
	// requires it to be at least twice its AttemptTimeout.
	SamplingDuration time.Duration

	// BreakDuration is how long the breaker stays open before it lets one
	// probe through. Default 5 s.
	BreakDuration time.Duration

	// SlowCallThreshold, when above 0, counts a call that took at least this
	// long as a failure even if it succeeded. 0, the default, turns it off.
	SlowCallThreshold time.Duration

	// OnStateChange, if set, is called after every change of state, outside
	// the breaker's lock, on the goroutine that caused it. Calls from
	// different goroutines may interleave. A panic in it propagates to the
	// runner's caller; the change of state stands, and a probe the breaker
	// had just let through is given back.
	OnStateChange func(from, to State)

	// MeterProvider receives the breaker's state gauge; nil means the global
	// meter provider. The gauge reads the breaker's state once the calls
	// that changed it have returned.
	MeterProvider metric.MeterProvider

	// Logger receives the breaker's transitions: opening at Warn,
	// half-opening and closing at Info. nil logs nothing.
	Logger *slog.Logger
}

// The defaults of BreakerOptions: Polly's CircuitBreakerStrategyOptions.
const (
	breakerFailureRatio      = 0.1
	breakerMinimumThroughput = 100
	breakerSamplingDuration  = 30 * time.Second
	breakerBreakDuration     = 5 * time.Second
)

// ratioMode reports whether o, as given, asks for the ratio mode.
func (o *BreakerOptions) ratioMode() bool { return o.ConsecutiveFailures == 0 }

// withDefaults returns o with its zero fields set to their defaults.
func (o BreakerOptions) withDefaults() BreakerOptions {
	if o.ratioMode() {
		o.FailureRatio = cmp.Or(o.FailureRatio, breakerFailureRatio)
		o.MinimumThroughput = cmp.Or(o.MinimumThroughput, breakerMinimumThroughput)
		o.SamplingDuration = cmp.Or(o.SamplingDuration, breakerSamplingDuration)
	}
	o.BreakDuration = cmp.Or(o.BreakDuration, breakerBreakDuration)
	return o
}

// Validate returns every problem with o at once, joined with errors.Join;
// each is a *headroom.ConfigError naming the field. It returns nil when
// NewBreaker would succeed.
func (o *BreakerOptions) Validate() error {
	l := problems.New("resilience")
	o.check(l)
	return l.Err()
}

// check records o's problems on l.
func (o *BreakerOptions) check(l *problems.List) {
	if o.ConsecutiveFailures < 0 {
		l.Add("ConsecutiveFailures", o.ConsecutiveFailures, "0 (the ratio mode) or 1 or more")
	}
	if o.ConsecutiveFailures > 0 {
		const want = "0 in the consecutive mode (ConsecutiveFailures is set): choose one mode"
		for _, f := range []struct {
			name string
			set  bool
			v    any
		}{{"FailureRatio", o.FailureRatio != 0, o.FailureRatio}, {"MinimumThroughput", o.MinimumThroughput != 0, o.MinimumThroughput},
			{"SamplingDuration", o.SamplingDuration != 0, o.SamplingDuration}} {
			if f.set {
				l.Add(f.name, f.v, want)
			}
		}
	} else {
		if o.FailureRatio != 0 && !(o.FailureRatio > 0 && o.FailureRatio <= 1) { // refuses NaN
			l.Add("FailureRatio", o.FailureRatio, "0 (the default, 0.1) or a fraction in (0, 1]")
		}
		if o.MinimumThroughput != 0 && o.MinimumThroughput < 2 {
			l.Add("MinimumThroughput", o.MinimumThroughput, "0 (the default, 100) or 2 or more")
		}
		if o.SamplingDuration < 0 {
			l.Add("SamplingDuration", o.SamplingDuration, "0 (the default, 30s) or a duration above 0")
		}
	}
	if o.BreakDuration < 0 {
		l.Add("BreakDuration", o.BreakDuration, "0 (the default, 5s) or a duration above 0")
	}
	if o.SlowCallThreshold < 0 {
		l.Add("SlowCallThreshold", o.SlowCallThreshold, "0 (off) or a duration above 0")
	}
}
