package quota

import (
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

// nextBackoff returns the key's next wait, within [0, MaxRetryAfter].
func (e *entry) nextBackoff(c *config) time.Duration {
	if e.bo == nil {
		e.bo = new(backoff.ExponentialBackOff)
		backoffcurve.Reset(e.bo, c.backoff)
	}
	return clampWait(e.bo.NextBackOff(), c.maxRetryAfter)
}
