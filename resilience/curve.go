package resilience

import (
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
)

// curve is one Backoff's progress through a run. Each advances only when it
// is used, and every delay is further capped by Options.MaximumDelay and by
// the time left on the deadline. The run allocates its curves on its first
// retry and sets each up on its first use, so a run that never retries never
// touches them.
type curve struct {
	b       backoff.ExponentialBackOff
	started bool
}

// next returns the curve's next delay on b, whose defaults are filled in.
func (c *curve) next(b *headroom.Backoff) time.Duration {
	if !c.started {
		backoffcurve.Reset(&c.b, *b)
		c.started = true
	}
	return max(c.b.NextBackOff(), 0) // never backoff.Stop: MaxElapsedTime is 0
}
