package resilience

import (
	"errors"

	"github.com/headroom-go/headroom"
)

// ErrNilPolicy is what Run and Try return for a nil *Policy.
var ErrNilPolicy = errors.New("resilience: nil policy")

func join(errs []error) error {
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// Validate lists every problem with o at once (errors.Join of
// *headroom.ConfigError), or returns nil. It checks each field, the curves, and how
// the fields fit together:
//
//   - Retries, Timeout, AttemptTimeout and MaximumDelay are not negative;
//   - AttemptTimeout is at most Timeout when both are set (Polly's
//     HttpStandardResilienceOptions validator);
//   - a ratio-mode Breaker's SamplingDuration is at least twice
//     AttemptTimeout (the same validator: a window shorter than two attempts
//     cannot see a failure rate);
//   - each Backoff has Initial and Max not negative, Multiplier 0 or at
//     least 1, and Jitter in [0, 1).
//
// The Breaker and the Budget validated their own options when built.
func (o *Options) Validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, &headroom.ConfigError{Package: "resilience", Field: field, Value: v, Want: want})
	}
	if o.Retries < 0 {
		bad("Retries", o.Retries, "0 or more")
	}
	if o.Timeout < 0 {
		bad("Timeout", o.Timeout, "0 (none) or a duration above 0")
	}
	if o.AttemptTimeout < 0 {
		bad("AttemptTimeout", o.AttemptTimeout, "0 (none) or a duration above 0")
	}
	if o.Timeout > 0 && o.AttemptTimeout > o.Timeout {
		bad("AttemptTimeout", o.AttemptTimeout, "at most Timeout ("+o.Timeout.String()+")")
	}
	if o.MaximumDelay < 0 {
		bad("MaximumDelay", o.MaximumDelay, "0 (no cap) or a duration above 0")
	}
	validateBackoff("Backoff", &o.Backoff, bad)
	validateBackoff("ThrottledBackoff", &o.ThrottledBackoff, bad)
	if b := o.Breaker; b != nil && b.opts.FailureRatio > 0 && o.AttemptTimeout > 0 &&
		b.opts.SamplingDuration < 2*o.AttemptTimeout {
		bad("Breaker.SamplingDuration", b.opts.SamplingDuration,
			"at least twice AttemptTimeout ("+(2*o.AttemptTimeout).String()+")")
	}
	return join(errs)
}

func validateBackoff(name string, b *Backoff, bad func(string, any, string)) {
	if b.Initial < 0 {
		bad(name+".Initial", b.Initial, "0 or a duration above 0")
	}
	if b.Multiplier != 0 && !(b.Multiplier >= 1 && b.Multiplier < 1e6) {
		bad(name+".Multiplier", b.Multiplier, "0 (constant) or a factor in [1, 1e6)")
	}
	if !(b.Jitter >= 0 && b.Jitter < 1) {
		bad(name+".Jitter", b.Jitter, "a fraction in [0, 1)")
	}
	if b.Max < 0 {
		bad(name+".Max", b.Max, "0 (no cap) or a duration above 0")
	}
}
