package adaptivetest

import "time"

// Clock moves a testing/synctest bubble's fake clock to model time, for
// limiters that read the clock themselves. Create it inside the bubble and
// call Advance before each call into the limiter: the model is
// single-threaded, so each Sleep returns at exactly the model time.
type Clock struct{ start time.Time }

// NewClock starts model time 0 at the bubble's now.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// Advance sleeps until model time now; it returns at once when now has
// passed.
func (c *Clock) Advance(now time.Duration) {
	if d := now - time.Since(c.start); d > 0 {
		time.Sleep(d)
	}
}
