package adaptive

import (
	"math"
	"time"
)

// Defaults of the latency-adaptive concurrency limit.
const (
	DefaultMinimum        = 4
	DefaultMaximum        = 200
	DefaultInitial        = 20
	DefaultMultiple       = 2.0
	DefaultDecreaseFactor = 0.9
)

// ConcurrencyConfig bounds and tunes a Concurrency engine. A zero field
// takes its default; Initial is then clamped into [Minimum, Maximum].
type ConcurrencyConfig struct {
	Minimum int // the floor, a liveness guarantee (default 4)
	Maximum int // the ceiling (default 200)
	Initial int // the limit before anything is measured (default 20)
	// Multiple is how many times the baseline the round's fastest call may
	// take before the round counts as queueing (default 2.0).
	Multiple float64
	// DecreaseFactor multiplies the limit after a queueing round (default
	// 0.9). The same pairing as TCP and Netflix's AIMDLimit (backoffRatio
	// 0.9): multiplicative decrease, additive increase of one.
	DecreaseFactor float64
}

func (c ConcurrencyConfig) withDefaults() ConcurrencyConfig {
	if c.Minimum <= 0 {
		c.Minimum = DefaultMinimum
	}
	if c.Maximum <= 0 {
		c.Maximum = DefaultMaximum
	}
	if c.Initial <= 0 {
		c.Initial = DefaultInitial
	}
	if !(c.Multiple > 0) {
		c.Multiple = DefaultMultiple
	}
	if !(c.DecreaseFactor > 0 && c.DecreaseFactor < 1) {
		c.DecreaseFactor = DefaultDecreaseFactor
	}
	c.Maximum = max(c.Maximum, c.Minimum)
	c.Initial = min(max(c.Initial, c.Minimum), c.Maximum)
	return c
}

// Concurrency is the latency-adaptive concurrency limit's engine: the slots
// and the control loop, a deterministic state machine. Its methods take the
// time on the caller's monotonic axis and read no clock; it starts no
// goroutine and never blocks. It is not safe for concurrent use: the shell
// (limit.Adaptive) guards it with a mutex.
//
// How it decides. A round is one limit's worth of completed
// units. At a round's end its fastest call is compared with Multiple × the
// baseline (LatencyBaseline: the p10 of the last five minutes, rise-capped):
//
//   - fastest above it, or any call in the round dropped: the limit is
//     multiplied by DecreaseFactor and rounded down (so it always falls by
//     at least one), never below Minimum;
//   - otherwise, only if the limit constrained the round (in-flight reached
//     the limit, or a call was refused or queued): the limit grows by one,
//     never above Maximum. An idle or under-used limiter never grows.
//
// Calls granted before a decrease still count toward the next round. They
// measured the old, higher limit and may cut again for the same queue; the
// model showed that this double cut costs nothing measurable at the settle
// point, while skipping them doubles the time a collapsing dependency, whose
// rounds are slow to complete, takes to bring the limit down.
//
// Outcomes. A success is a latency sample: it feeds the baseline and the
// round's fastest. A dropped call (timeout, 503, throttle) is a queueing
// signal: it counts toward the round and forces that round to decrease, at
// most one decrease per round however many calls dropped; its duration is
// not a service latency and feeds neither the baseline nor the fastest. An
// ignored call frees its slots and teaches nothing.
//
// Until the baseline exists (100 successful calls) rounds end without a
// decision: the limit holds at Initial rather than guessing, so the first
// baseline is measured at Initial's concurrency. A cut above Minimum also
// holds the baseline's ceiling (LatencyBaseline.HoldRise): a loop that sees
// queueing and acts on it must not let that queueing become normal.
type Concurrency struct {
	cfg      ConcurrencyConfig
	limit    int
	inFlight int

	roundSize   int // units that end the round: the limit when it began
	roundDone   int
	fastest     time.Duration
	dropped     bool
	constrained bool
	// lastFastest is the fastest call of the latest round that saw a
	// success; 0 until one has.
	lastFastest time.Duration

	base LatencyBaseline
}

// NewConcurrency returns an engine at cfg.Initial with nothing in flight.
func NewConcurrency(cfg ConcurrencyConfig) *Concurrency {
	c := &Concurrency{}
	c.Init(cfg)
	return c
}

// Init resets c to a new engine, in place.
func (c *Concurrency) Init(cfg ConcurrencyConfig) {
	*c = Concurrency{cfg: cfg.withDefaults()}
	c.limit = c.cfg.Initial
	c.newRound()
}

// Config is the configuration in force, defaults filled in.
func (c *Concurrency) Config() ConcurrencyConfig { return c.cfg }

// Limit is the limit in force now, Initial until it has learnt one.
func (c *Concurrency) Limit() int { return c.limit }

// InFlight is the number of units held.
func (c *Concurrency) InFlight() int { return c.inFlight }

// CurrentLimit is the limit the loop has settled on, and false until it has
// seen enough calls to have an opinion (a baseline: 100 successful calls).
func (c *Concurrency) CurrentLimit() (int, bool) {
	if !c.base.known {
		return 0, false
	}
	return c.limit, true
}

// Baseline is what the engine thinks a fast call takes, and false until it
// has seen 100 successful calls.
func (c *Concurrency) Baseline() (time.Duration, bool) { return c.base.Value() }

// LastRound is the fastest call of the latest completed round that had a
// success, the figure compared with Multiple × the baseline, and false
// until a round has had one.
func (c *Concurrency) LastRound() (time.Duration, bool) { return c.lastFastest, c.lastFastest > 0 }

// Fits reports whether TryAcquire(n) would take n units now: they fit
// under the limit, or nothing is in flight.
func (c *Concurrency) Fits(n int) bool { return c.inFlight == 0 || c.inFlight+n <= c.limit }

// TryAcquire takes n units if they fit under the limit, or if nothing is in
// flight. The second rule is for a call larger than the current limit (up
// to Maximum, which the shell enforces): it could never fit, and with
// nothing in flight no release would ever end a round and move the limit,
// so it would wait, and a FIFO queue behind it, for ever. Granted alone it
// holds more than the limit until it is released; nothing else is granted
// meanwhile. A refusal, like an acquisition that fills the limit, marks the
// round as constrained.
func (c *Concurrency) TryAcquire(n int) bool {
	if c.inFlight > 0 && c.inFlight+n > c.limit {
		c.constrained = true
		return false
	}
	c.inFlight += n
	if c.inFlight >= c.limit {
		c.constrained = true
	}
	return true
}

// Blocked marks the round as constrained without trying: a caller was
// refused or queued behind others.
func (c *Concurrency) Blocked() { c.constrained = true }

// Release frees n units of a call that succeeded, ending at now after
// latency, and reports whether the limit changed.
func (c *Concurrency) Release(now, latency time.Duration, n int) bool {
	c.inFlight -= n
	c.base.Add(now, latency)
	c.fastest = min(c.fastest, latency)
	return c.count(now, n)
}

// ReleaseDropped frees n units of a call that timed out or was shed (a
// queueing signal), ending at now after latency, and reports whether the
// limit changed.
func (c *Concurrency) ReleaseDropped(now, latency time.Duration, n int) bool {
	c.inFlight -= n
	c.dropped = true
	return c.count(now, n)
}

// ReleaseIgnored frees n units of a call that teaches nothing.
func (c *Concurrency) ReleaseIgnored(n int) { c.inFlight -= n }

func (c *Concurrency) count(now time.Duration, n int) bool {
	c.roundDone += n
	if c.roundDone < c.roundSize {
		return false
	}
	return c.endRound(now)
}

// endRound applies the rules of "How it decides" and starts a new round.
func (c *Concurrency) endRound(now time.Duration) bool {
	old := c.limit
	if b, ok := c.base.Value(); ok {
		slow := c.fastest > time.Duration(math.Min(c.cfg.Multiple*float64(b), math.MaxInt64))
		switch {
		case c.dropped || slow:
			if c.limit > c.cfg.Minimum {
				c.base.HoldRise()
			}
			c.limit = max(c.cfg.Minimum, int(c.cfg.DecreaseFactor*float64(c.limit)))
		case c.constrained && c.limit < c.cfg.Maximum:
			c.limit++
		}
	}
	if c.fastest != math.MaxInt64 {
		c.lastFastest = c.fastest
	}
	c.newRound()
	return c.limit != old
}

func (c *Concurrency) newRound() {
	c.roundSize, c.roundDone = c.limit, 0
	c.fastest = math.MaxInt64
	c.dropped = false
	c.constrained = c.inFlight >= c.limit
}
