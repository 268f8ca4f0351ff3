package quota

import (
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/headroom-go/headroom/internal/backoffcurve"
)

// The backoff without hints: a 429 or 503 that names no
// Retry-After and no exhausted quota with a reset ahead tells the guard only
// that it went too fast. Each key then waits on its own exponential curve
// with jitter (Options.Backoff, computed by github.com/cenkalti/backoff/v4,
// the curve the resilience runner also uses), at most MaxRetryAfter. A
// success (2xx or 3xx) resets the curve; other statuses leave it where it
// is. The curve reads no clock: the instant the wait ends is computed from
// the now the caller passes.
//
// The jitter, uniform within ±Jitter of the curve as cenkalti/backoff draws
// it, comes from the guard's own source (Options.Seed): the library draws
// from math/rand's global source, which cannot be seeded, and a simulator
// on virtual time must give the same numbers for the same seed.

// nextBackoff returns the key's next wait, within [0, MaxRetryAfter].
func (e *entry) nextBackoff(c *config) time.Duration {
	if e.bo == nil {
		e.bo = new(backoff.ExponentialBackOff)
		curve := c.backoff
		curve.Jitter = new(0.0)
		backoffcurve.Reset(e.bo, curve)
		e.rng = rand.New(rand.NewPCG(c.seed, c.streams.Add(1)))
	}
	d := e.bo.NextBackOff()
	if j := *c.backoff.Jitter; j > 0 {
		d = time.Duration(float64(d) * (1 - j + 2*j*e.rng.Float64()))
	}
	return clampWait(d, c.maxRetryAfter)
}
