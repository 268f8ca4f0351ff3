package headroom

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
// default curve. The options that hold a Backoff check it in their Validate:
// Initial and Max 0 or above, Max at least Initial, Multiplier 0 or at least
// 1, Jitter in [0, 1].
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
