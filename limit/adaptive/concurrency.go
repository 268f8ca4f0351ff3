package adaptive

import (
	"cmp"
	"fmt"
	"math"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// The defaults of the latency-adaptive concurrency limit; each field of
// ConcurrencyConfig says why.
const (
	defaultMinimum        = 4
	defaultMaximum        = 200
	defaultInitial        = 20
	defaultMultiple       = 2.0
	defaultDecreaseFactor = 0.9
)

// ConcurrencyConfig bounds and tunes a Concurrency engine, and through
// package limit the latency-adaptive concurrency limit (limit.Adaptive,
// limit.Options.Adaptive). A zero field takes its default, so the zero
// value is a complete configuration, and "adaptive": {} a complete JSON
// one; set Maximum per dependency.
type ConcurrencyConfig struct {
	// Minimum is the floor, a liveness guarantee: a dependency slow for
	// reasons unrelated to concurrency cannot drive the limit to zero, and
	// its recovery is still sampled. 0 or more; 0 means 4, or Maximum if
	// that is lower: a default never conflicts with a bound that was set.
	Minimum int `json:"minimum,omitempty"`
	// Maximum is the ceiling; it bounds the damage when the measurement is
	// wrong. 0 or more and at least Minimum; 0 means 200.
	Maximum int `json:"maximum,omitempty"`
	// Initial is the limit before anything is measured. 0 or more; set, it
	// lies in [Minimum, Maximum]; 0 means 20, clamped into that range.
	Initial int `json:"initial,omitempty"`
	// Multiple is how many times the baseline the round's fastest call may
	// take before the round counts as queueing: 0 or a finite number above
	// 1; 0 means 2.0.
	Multiple float64 `json:"multiple,omitempty"`
	// DecreaseFactor multiplies the limit after a queueing round: 0 or a
	// number between 0 and 1; 0 means 0.9. The same pairing as TCP and
	// Netflix's AIMDLimit (backoffRatio 0.9): multiplicative decrease,
	// additive increase of one.
	DecreaseFactor float64 `json:"decreaseFactor,omitempty"`
}

// Validate lists every problem with c at once, each a *headroom.ConfigError
// of package "adaptive" naming the field, joined with errors.Join; nil when
// NewConcurrency would succeed.
func (c *ConcurrencyConfig) Validate() error {
	l := problems.New("adaptive")
	c.check(l)
	return l.Err()
}

// check records c's problems on l.
func (c *ConcurrencyConfig) check(l *problems.List) {
	for _, f := range []struct {
		name     string
		v, deflt int
	}{{"Minimum", c.Minimum, defaultMinimum}, {"Maximum", c.Maximum, defaultMaximum}, {"Initial", c.Initial, defaultInitial}} {
		if f.v < 0 {
			l.Add(f.name, f.v, fmt.Sprintf("0 (%d) or more", f.deflt))
		}
	}
	if m := c.Multiple; m < 0 || m != m || (m > 0 && m <= 1) || math.IsInf(m, 0) {
		l.Add("Multiple", m, fmt.Sprintf("0 (%.1f) or a finite number above 1", defaultMultiple))
	}
	if f := c.DecreaseFactor; f < 0 || f >= 1 || f != f {
		l.Add("DecreaseFactor", f, fmt.Sprintf("0 (%v) or a number between 0 and 1", defaultDecreaseFactor))
	}
	if c.Minimum < 0 || c.Maximum < 0 {
		return
	}
	if lo, hi := c.bounds(); lo > hi {
		l.Add("Minimum", c.Minimum, fmt.Sprintf("at most Maximum (%d)", hi))
	} else if c.Initial > 0 && (c.Initial < lo || c.Initial > hi) {
		l.Add("Initial", c.Initial, fmt.Sprintf("between Minimum (%d) and Maximum (%d)", lo, hi))
	}
}

// bounds are the minimum and maximum, defaults filled in.
func (c *ConcurrencyConfig) bounds() (lo, hi int) {
	hi = cmp.Or(c.Maximum, defaultMaximum)
	return cmp.Or(c.Minimum, min(defaultMinimum, hi)), hi
}

// withDefaults is c with its zero fields set; a default Initial is clamped
// into [Minimum, Maximum]. c is valid (Validate).
func (c ConcurrencyConfig) withDefaults() ConcurrencyConfig {
	c.Minimum, c.Maximum = c.bounds()
	c.Multiple = cmp.Or(c.Multiple, defaultMultiple)
	c.DecreaseFactor = cmp.Or(c.DecreaseFactor, defaultDecreaseFactor)
	c.Initial = min(max(cmp.Or(c.Initial, defaultInitial), c.Minimum), c.Maximum)
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
// baseline (the p10 of the last five minutes, rise-capped):
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
// holds the baseline's ceiling: a loop that sees
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

	base latencyBaseline
}

// NewConcurrency returns an engine at cfg.Initial with nothing in flight,
// or Validate's error.
func NewConcurrency(cfg ConcurrencyConfig) (*Concurrency, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Concurrency{cfg: cfg.withDefaults()}
	c.limit = c.cfg.Initial
	c.newRound()
	return c, nil
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

// fits reports whether TryAcquire would take n units now: they fit under
// the limit, or nothing is in flight.
func (c *Concurrency) fits(n int) bool { return c.inFlight == 0 || c.inFlight+n <= c.limit }

// TryAcquire takes cost units if they fit under the limit, or if nothing is
// in flight, and reports whether it did. The second rule is for a call
// larger than the current limit (up to Maximum, which the shell enforces):
// it could never fit, and with nothing in flight no release would ever end
// a round and move the limit, so it would wait, and a FIFO queue behind it,
// for ever. Granted alone it holds more than the limit until it is
// released; nothing else is granted meanwhile. A refusal, like an
// acquisition that fills the limit, marks the round as constrained.
//
// now is not read: units come back on Release, not with time, and a
// refusal's retryAfter is 0 (when a holder releases is not the engine's to
// know). A cost of 0 always succeeds and takes nothing; a negative one
// never does.
func (c *Concurrency) TryAcquire(now time.Duration, cost int) (ok bool, retryAfter time.Duration) {
	if cost < 0 {
		return false, 0
	}
	if !c.fits(cost) {
		c.constrained = true
		return false, 0
	}
	c.inFlight += cost
	if c.inFlight >= c.limit {
		c.constrained = true
	}
	return true, 0
}

// Blocked marks the round as constrained without trying: a caller was
// refused or queued behind others.
func (c *Concurrency) Blocked() { c.constrained = true }

// Release frees cost units of a call that ended at now after latency, with
// outcome o, and reports whether the limit changed:
//
//   - Success is a latency sample: it feeds the baseline and the round's
//     fastest call;
//   - Dropped and Throttled are queueing signals: they count toward the
//     round and force it to decrease; their latency is no service time and
//     feeds nothing;
//   - Ignored frees the units and teaches nothing: it does not count toward
//     the round.
func (c *Concurrency) Release(now, latency time.Duration, cost int, o Outcome) (changed bool) {
	c.inFlight -= cost
	switch o {
	case Success:
		c.base.Add(now, latency)
		c.fastest = min(c.fastest, latency)
	case Dropped, Throttled:
		c.dropped = true
	default:
		return false
	}
	return c.count(now, cost)
}

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
