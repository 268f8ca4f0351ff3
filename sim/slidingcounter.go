package sim

import (
	"math"
	"time"
)

// slidingCounter approximates a sliding window with two counters, as
// go-chi/httprate computes it (Cloudflare and HAProxy's freq_ctr weigh the
// same two counts): windows are multiples of the window from the start of
// the run; at now, elapsed into the current window, the estimate is
//
//	previous × (window − elapsed) / window + current
//
// in float64, rounded to the nearest whole unit (math.Round), and a request
// is accepted when that plus its units stays within the quota; it then adds
// its units to the current count. The previous window is the one just
// before the current; any older count is forgotten. After each accepted
// request the rounded estimate is within the quota, and a window never
// counts more than the quota; but any interval of one window may hold up to
// twice the quota (the end of one window and the start of the next). Its
// reset is the end of the current window (httprate's X-RateLimit-Reset); a
// refused request fits once the previous window's weight has decayed
// enough, in this window or the next. (httprate's own Retry-After is the
// window's length, not this; the model says when the request fits, as
// every kind does.)
type slidingCounter struct {
	window        time.Duration
	quota         int
	start         time.Duration // the current window's start
	current, prev int
}

func newSlidingCounter(s Server, q int) *slidingCounter {
	return &slidingCounter{window: s.Window, quota: q}
}

func (c *slidingCounter) setQuota(_ time.Duration, units int) { c.quota = units }

// roll moves to the window that holds now.
func (c *slidingCounter) roll(now time.Duration) {
	if now < c.start+c.window {
		return
	}
	next := now - now%c.window
	if next == c.start+c.window {
		c.prev = c.current
	} else {
		c.prev = 0
	}
	c.current, c.start = 0, next
}

// estimate is the weighted count at now (roll first).
func (c *slidingCounter) estimate(now time.Duration) float64 {
	w := float64(c.window)
	return float64(c.prev)*(w-float64(now-c.start))/w + float64(c.current)
}

func (c *slidingCounter) used(now time.Duration) int {
	c.roll(now)
	return int(math.Round(c.estimate(now)))
}

func (c *slidingCounter) decide(now time.Duration, units int) decision {
	c.roll(now)
	rate := int(math.Round(c.estimate(now)))
	d := decision{resetAt: c.start + c.window}
	if rate+units <= c.quota {
		c.current += units
		d.ok = true
		d.remaining = max(c.quota-rate-units, 0)
		return d
	}
	d.remaining = max(c.quota-rate, 0)
	d.fitsAt, d.never = c.fitAt(now, units)
	return d
}

// fitAt is when a request of units refused at now would be accepted if
// nothing else came: the first instant the rounded estimate is at most
// quota − units, that is the estimate below limit = quota − units + ½.
func (c *slidingCounter) fitAt(now time.Duration, units int) (time.Duration, bool) {
	if units > c.quota {
		return 0, true
	}
	limit := float64(c.quota-units) + 0.5
	w := float64(c.window)
	var bound float64 // the estimate is below limit after this instant
	if cur := float64(c.current); cur < limit {
		// This window: prev × (start+window−t)/window + current < limit.
		bound = float64(c.start+c.window) - (limit-cur)*w/float64(c.prev)
	} else {
		// The next window, where this window's count is the previous one
		// and nothing is current yet: current × (start+2·window−t)/window
		// < limit.
		bound = float64(c.start+2*c.window) - limit*w/cur
	}
	return max(time.Duration(math.Floor(bound))+1, now+1), false
}
