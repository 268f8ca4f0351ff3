package resilience

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Backoff is one exponential backoff curve with jitter. The n-th delay on
// the curve (n from 0) is
//
//	min(Initial × Multiplier^n, Max) × U(1 − Jitter, 1 + Jitter)
//
// as computed by github.com/cenkalti/backoff/v4's ExponentialBackOff
// (InitialInterval, Multiplier, MaxInterval, RandomizationFactor). A policy
// has two: Options.Backoff for Transient failures and
// Options.ThrottledBackoff, a longer one, for Throttled ones. Each advances
// only when it is used, and every delay is further capped by
// Options.MaximumDelay and by the time left on the deadline.
type Backoff struct {
	// Initial is the first delay before jitter. 0 retries at once.
	Initial time.Duration
	// Multiplier is the growth from one delay to the next: 2 doubles. 0
	// means 1, a constant delay; otherwise it must be at least 1.
	Multiplier float64
	// Jitter is the randomization factor, in [0, 1): each delay is drawn
	// uniformly from ±Jitter around the curve. 0 is no jitter.
	Jitter float64
	// Max caps the curve before jitter; 0 means no cap of its own (the
	// policy's MaximumDelay still applies).
	Max time.Duration
}

// maxCurve stands in for "no cap" in cenkalti's MaxInterval, which must be
// set (0 would flatten the curve to 0) and must leave room for the jitter
// without overflowing a time.Duration.
const maxCurve = 24 * time.Hour

// curve is one Backoff's progress through a run. The run allocates its
// curves on its first retry and sets each up on its first use, so a run that
// never retries never touches them (and never reads the clock for them).
type curve struct {
	b       backoff.ExponentialBackOff
	started bool
}

// next returns the curve's next delay.
func (c *curve) next(o *Backoff) time.Duration {
	if !c.started {
		m := o.Multiplier
		if m == 0 {
			m = 1
		}
		ceiling := o.Max
		if ceiling <= 0 || ceiling > maxCurve {
			ceiling = maxCurve
		}
		c.b = backoff.ExponentialBackOff{
			InitialInterval:     min(o.Initial, ceiling),
			RandomizationFactor: o.Jitter,
			Multiplier:          m,
			MaxInterval:         ceiling,
			MaxElapsedTime:      0, // never Stop: the policy bounds the run
			Stop:                backoff.Stop,
			Clock:               backoff.SystemClock,
		}
		c.b.Reset()
		c.started = true
	}
	d := c.b.NextBackOff()
	if d < 0 { // backoff.Stop; cannot happen with MaxElapsedTime 0
		d = 0
	}
	return d
}
