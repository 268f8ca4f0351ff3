package adaptive

import (
	"fmt"
	"math"
	"time"

	"github.com/headroom-go/headroom"
)

// The defaults of the throttle-driven rate limiter. Rates are units per
// minute for the whole budget (all instances together).
//
// The limiter must work against a server it knows nothing about, from 5 to
// 1,000 requests a second and windows of a second to a minute, so the
// defaults are chosen for an unknown server, not for one API:
//
//   - the initial rate is 1,125 a minute (SharePoint Online's smallest
//     published tier of 1,250, less 10%: safe for a tenant of any size), and
//     the slow start (Rate.OnSuccess) doubles it every half second while
//     requests wait, so that a server of 1,000 a second is reached in 3 s;
//   - the maximum is 10,000 a second: a ceiling for runaway, not a guess at
//     the limit, which the limiter learns (or a quota guard reads from the
//     headers);
//   - the minimum is one unit a second, so a limiter never stalls;
//   - the bucket holds 1 s of the rate: a server such as nginx's limit_req
//     refuses a burst beyond a fraction of a second of its rate, and 10 s of
//     the rate would be refused at the first idle moment;
//   - the cooldown between cuts is 1 s: a cut needs a request sent after the
//     last one, which already keeps a burst of throttles to one cut, and at 5 s
//     a limiter far above a per-second limit meets throttles for seconds.
const (
	defaultMinUnitsPerMinute     = 60.0
	defaultMaxUnitsPerMinute     = 600000.0
	defaultInitialUnitsPerMinute = 1125.0
	defaultBurst                 = time.Second       // the bucket holds 1 s of the rate
	defaultQueueLimit            = 500               // waiting requests
	defaultMaxWait               = 100 * time.Second // longest wait in the queue
	defaultDecreaseCooldown      = time.Second       // least time between two cuts
	defaultMaxPause              = 30 * time.Second  // longest Retry-After pause
	// defaultPublishedLimitFraction is the share of a published quota the
	// rate may use (Rate.SetPublishedLimit): 1 − the quota guard's default
	// reserve of 2% (limit/quota), so that the rate limiter and the guard
	// agree on what is left for others. docs/simulator.md shows 0.97 losing
	// throughput and 0.99 keeping less margin for another client.
	defaultPublishedLimitFraction = 0.98
)

// RateConfig configures a Rate. Unlike limit.AdaptiveRateOptions, no zero
// field means a default here (but PublishedLimitFraction): start from
// DefaultRateConfig, whose values each field gives, with the bound NewRate
// holds it to. Rates are for the whole budget, in units per minute; the
// limiter takes 1/Instances of them. The defaults are chosen for a server
// the limiter knows nothing about (see the constants above for why).
type RateConfig struct {
	// MinUnitsPerMinute is the floor of the rate, so a limiter never
	// stalls: above 0 and at most MaxUnitsPerMinute. Default 60 (one unit
	// a second).
	MinUnitsPerMinute float64
	// MaxUnitsPerMinute is the ceiling, against runaway, not a guess at
	// the limit: finite and above 0. Default 600,000 (10,000 a second).
	MaxUnitsPerMinute float64
	// InitialUnitsPerMinute is the rate at the start, which the slow start
	// doubles every half second while requests wait: between the minimum
	// and the maximum. Default 1,125.
	InitialUnitsPerMinute float64
	// Burst is how much of the rate the bucket holds (at least 1 unit):
	// above 0. Default 1 s.
	Burst time.Duration
	// QueueLimit is how many requests may wait; 0 refuses at once
	// (refusedNoUnits) instead of queueing. 0 or more. Default 500.
	QueueLimit int
	// MaxWait is the longest a request may wait in the queue; above 0 when
	// QueueLimit is. Default 100 s.
	MaxWait time.Duration
	// DecreaseCooldown is the least time between two cuts: 0 or more.
	// Default 1 s.
	DecreaseCooldown time.Duration
	// MaxPause caps the pause after a throttle with a Retry-After; 0 never
	// pauses. 0 or more. Default 30 s.
	MaxPause time.Duration
	// Controller sets the rate; nil means AIMD{}, the default.
	Controller RateController
	// Instances is how many processes share the budget; 0 means 1, the
	// default.
	Instances int
	// Disabled measures only: every request is admitted at once, the rate
	// never changes, units and throttles are still counted.
	Disabled bool
	// PublishedLimitFraction is the share of a published quota the whole
	// budget may use once Rate.SetPublishedLimit is given one: the maximum
	// becomes min(MaxUnitsPerMinute, PublishedLimitFraction × published).
	// In (0, 1]; 0 means the default, 0.98, the one field whose zero is a
	// default, so that configurations written before it existed keep
	// working.
	PublishedLimitFraction float64
}

// DefaultRateConfig returns the defaults, with AIMD.
func DefaultRateConfig() RateConfig {
	return RateConfig{
		MinUnitsPerMinute:     defaultMinUnitsPerMinute,
		MaxUnitsPerMinute:     defaultMaxUnitsPerMinute,
		InitialUnitsPerMinute: defaultInitialUnitsPerMinute,
		Burst:                 defaultBurst,
		QueueLimit:            defaultQueueLimit,
		MaxWait:               defaultMaxWait,
		DecreaseCooldown:      defaultDecreaseCooldown,
		MaxPause:              defaultMaxPause,
		Controller:            AIMD{},
		Instances:             1,

		PublishedLimitFraction: defaultPublishedLimitFraction,
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Problems lists every problem with c; nil when NewRate would succeed.
func (c *RateConfig) Problems() []*headroom.ConfigError {
	var ps problems
	add := ps.add
	rates := []struct {
		name string
		v    float64
	}{{"MinUnitsPerMinute", c.MinUnitsPerMinute}, {"MaxUnitsPerMinute", c.MaxUnitsPerMinute}, {"InitialUnitsPerMinute", c.InitialUnitsPerMinute}}
	ok := true
	for _, r := range rates {
		if !(r.v > 0) || !finite(r.v) {
			add(r.name, r.v, "a rate above 0 units per minute")
			ok = false
		}
	}
	if ok {
		if c.MinUnitsPerMinute > c.MaxUnitsPerMinute {
			add("MinUnitsPerMinute", c.MinUnitsPerMinute, fmt.Sprintf("at most MaxUnitsPerMinute (%v)", c.MaxUnitsPerMinute))
		} else if c.InitialUnitsPerMinute < c.MinUnitsPerMinute || c.InitialUnitsPerMinute > c.MaxUnitsPerMinute {
			add("InitialUnitsPerMinute", c.InitialUnitsPerMinute, fmt.Sprintf("between MinUnitsPerMinute (%v) and MaxUnitsPerMinute (%v)", c.MinUnitsPerMinute, c.MaxUnitsPerMinute))
		}
	}
	if c.Burst <= 0 {
		add("Burst", c.Burst, "a duration above 0, such as \"10s\"")
	}
	if c.QueueLimit < 0 {
		add("QueueLimit", c.QueueLimit, "0 (refuse at once) or more")
	}
	if c.MaxWait < 0 || (c.QueueLimit > 0 && c.MaxWait == 0) {
		add("MaxWait", c.MaxWait, "a duration above 0 when requests may queue")
	}
	if c.DecreaseCooldown < 0 {
		add("DecreaseCooldown", c.DecreaseCooldown, "0 or more")
	}
	if c.MaxPause < 0 {
		add("MaxPause", c.MaxPause, "0 (never pause) or more")
	}
	if c.Instances < 0 {
		add("Instances", c.Instances, "1 or more (0 means 1)")
	}
	if f := c.PublishedLimitFraction; !(f >= 0 && f <= 1) {
		add("PublishedLimitFraction", f, "a fraction in (0, 1], such as 0.98 (0 means 0.98)")
	}
	switch ctl := c.Controller.(type) {
	case AIMD:
		ps = append(ps, ctl.problems()...)
	case Cubic:
		ps = append(ps, ctl.problems()...)
	}
	return ps
}

func (a AIMD) problems() problems {
	var ps problems
	if f := a.DecreaseFactor; f != 0 && (!(f > 0 && f < 1)) {
		ps.add("AIMD.DecreaseFactor", f, "a factor between 0 and 1, such as 0.7")
	}
	if s := a.IncreaseStep; !(s >= 0) || !finite(s) {
		ps.add("AIMD.IncreaseStep", s, "a step above 0 units per minute")
	}
	if a.IncreaseInterval < 0 {
		ps.add("AIMD.IncreaseInterval", a.IncreaseInterval, "a duration above 0, such as \"10s\"")
	}
	return ps
}

func (c Cubic) problems() problems {
	var ps problems
	if b := c.Beta; b != 0 && (!(b > 0 && b < 1)) {
		ps.add("Cubic.Beta", b, "a factor between 0 and 1, such as 0.7")
	}
	if s := c.ScaleConstant; !(s >= 0) || !finite(s) {
		ps.add("Cubic.ScaleConstant", s, "a constant above 0, such as 0.4")
	}
	return ps
}
