package quota

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The backoff without hints: a 429 or 503 that names no
// Retry-After and no exhausted quota with a reset ahead tells the guard only
// that it went too fast. Each key then waits on its own exponential curve
// with jitter — Initial × Multiplier^n, drawn from ±Jitter around it, at most
// Max and MaxRetryAfter — from github.com/cenkalti/backoff/v4, the curve the
// resilience runner also uses. A success (2xx or 3xx) resets the curve;
// other statuses leave it where it is.
//
// The curve's own clock only measures elapsed time for MaxElapsedTime, which
// is off (0: a key never stops backing off, it just stays at Max, and
// NextBackOff never returns Stop). It is given a clock that stands still, so
// the core reads none: the instant the wait ends is computed from the now
// the caller passes.

func (c *config) newBackoff() *backoff.ExponentialBackOff {
	b := &backoff.ExponentialBackOff{
		InitialInterval:     c.boInitial,
		RandomizationFactor: c.boJitter,
		Multiplier:          c.boMultiplier,
		MaxInterval:         c.boMax,
		MaxElapsedTime:      0,
		Stop:                backoff.Stop,
		Clock:               stoppedClock{},
	}
	b.Reset()
	return b
}

// nextBackoff returns the key's next wait, within [0, MaxRetryAfter].
func (e *entry) nextBackoff(c *config) time.Duration {
	if e.bo == nil {
		e.bo = c.newBackoff()
	}
	return clampWait(e.bo.NextBackOff(), c.maxRetryAfter)
}

// stoppedClock is the backoff curve's clock: it only feeds MaxElapsedTime,
// which is off.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Time{} }
