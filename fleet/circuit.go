package fleet

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// circuit keeps a dead Redis from costing every call a timeout. Closed, it
// lets every call through. After circuitThreshold failures in a row it
// opens: calls are decided by the failure policy at once, without Redis,
// for an interval that grows on an exponential curve with jitter (50 ms,
// doubling, at most 250 ms). When the interval has passed one call goes to
// Redis, the probe; its success closes the circuit and resets the curve,
// its failure opens it for the next interval. So a dead server costs one
// timeout per interval, and recovery needs nothing but a probe. The curve
// is short because recovery has a cost of its own: a process failing open
// admits on its share, unseen by Redis, until its probe brings it back, so
// the fleet can overrun the limit for as long as its slowest probe takes.
type circuit struct {
	open  atomic.Bool
	fails atomic.Int32 // failures in a row

	mu       sync.Mutex
	until    time.Time // open: when a probe may go
	probing  bool      // a probe is out
	interval *backoff.ExponentialBackOff
}

// circuitThreshold is how many failures in a row open the circuit: one
// lost packet is no outage.
const circuitThreshold = 3

func newCircuit() *circuit {
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = 50 * time.Millisecond
	bo.Multiplier = 2
	bo.RandomizationFactor = 0.2
	bo.MaxInterval = 250 * time.Millisecond
	bo.MaxElapsedTime = 0 // the circuit never gives up
	bo.Reset()
	return &circuit{interval: bo}
}

// allow reports whether a call may go to Redis now. While open it lets one
// probe through once the interval has passed.
func (c *circuit) allow() bool {
	if !c.open.Load() {
		return true
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.open.Load() {
		return true
	}
	if c.probing || time.Now().Before(c.until) {
		return false
	}
	c.probing = true
	return true
}

// blocked reports whether calls must keep away from Redis now: the circuit
// is open and no probe may go yet (or one is out). Unlike allow, it grants
// no probe: callers that queue ask allow when they reach Redis.
func (c *circuit) blocked() bool {
	if !c.open.Load() {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.open.Load() && (c.probing || time.Now().Before(c.until))
}

// succeeded notes an answer from Redis: the circuit closes.
func (c *circuit) succeeded() {
	if !c.open.Load() && c.fails.Load() == 0 {
		return // the fast path: nothing to change
	}
	c.mu.Lock()
	c.fails.Store(0)
	c.open.Store(false)
	c.probing = false
	c.interval.Reset()
	c.mu.Unlock()
}

// failed notes a call that Redis did not answer.
func (c *circuit) failed() {
	n := c.fails.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.probing || (!c.open.Load() && n >= circuitThreshold) {
		c.open.Store(true)
		c.probing = false
		c.until = time.Now().Add(c.interval.NextBackOff())
	}
}

// released notes that a probe ended without an answer either way (its
// caller's context ended): another may go.
func (c *circuit) released() {
	c.mu.Lock()
	c.probing = false
	c.mu.Unlock()
}
