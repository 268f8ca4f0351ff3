package headroom

import (
	"errors"
	"math"
)

// Backoff is one exponential backoff curve with jitter. The n-th wait on it
// (n from 0) is
//
//	min(Initial × Multiplier^n, Max) × U(1 − Jitter, 1 + Jitter)
//
// as github.com/cenkalti/backoff/v4's ExponentialBackOff computes it
// (InitialInterval, Multiplier, MaxInterval, RandomizationFactor), the one
// source of the curve in this module. The resilience runner's two curves
// and the quota guard's backoff without hints are Backoffs.
//
// A zero field takes the default of the setting that holds the Backoff, as
// that setting's comment gives it; so the zero Backoff is that setting's
// default curve.
type Backoff struct {
	// Initial is the first wait, before jitter: above 0.
	Initial Duration `json:"initial,omitempty"`
	// Multiplier is the growth from one wait to the next: 2 doubles, 1
	// keeps the wait constant. 1 or more.
	Multiplier float64 `json:"multiplier,omitempty"`
	// Jitter is the randomization factor, in [0, 1]: each wait is drawn
	// uniformly from ±Jitter around the curve, so that clients that failed
	// together do not come back together. nil means the default; new(0.0)
	// turns jitter off.
	Jitter *float64 `json:"jitter,omitempty"`
	// Max caps the curve, before jitter: at least Initial.
	Max Duration `json:"max,omitempty"`
}

// WithDefaults returns b with each zero field (nil Jitter) taken from d.
// A Max taken from d is raised to Initial when Initial is above it, so that
// a long first wait given alone is not refused for a default cap.
func (b Backoff) WithDefaults(d Backoff) Backoff {
	if b.Initial == 0 {
		b.Initial = d.Initial
	}
	if b.Multiplier == 0 {
		b.Multiplier = d.Multiplier
	}
	if b.Jitter == nil {
		b.Jitter = d.Jitter
	}
	if b.Max == 0 {
		b.Max = max(d.Max, b.Initial)
	}
	return b
}

// Validate lists every problem with b at once (errors.Join of *ConfigError),
// or returns nil. A zero field is no problem: it takes its default. Each
// problem's Field names b's field alone ("Initial"); the package that holds
// the Backoff puts its own name and the setting's in front.
func (b Backoff) Validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, &ConfigError{Package: "headroom", Field: field, Value: v, Want: want})
	}
	if b.Initial < 0 {
		bad("Initial", b.Initial, `0 (the default) or a duration above 0, such as "1s"`)
	}
	if m := b.Multiplier; m != 0 && !(m >= 1 && !math.IsInf(m, 1)) { // refuses NaN
		bad("Multiplier", m, "0 (the default) or a finite factor of 1 or more")
	}
	if j := b.Jitter; j != nil && !(*j >= 0 && *j <= 1) {
		bad("Jitter", *j, "a fraction in [0, 1]")
	}
	switch {
	case b.Max < 0:
		bad("Max", b.Max, `0 (the default) or a duration above 0, such as "1m"`)
	case b.Max > 0 && b.Max < b.Initial:
		bad("Max", b.Max, "at least Initial ("+b.Initial.String()+")")
	}
	return errors.Join(errs...)
}
