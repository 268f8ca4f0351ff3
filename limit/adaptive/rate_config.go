package adaptive

import (
	"cmp"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/problems"
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
//     the slow start (Rate.Release) doubles it every half second while
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

// RateConfig configures a Rate, and through package limit the adaptive
// rate limiter (limit.AdaptiveRate, limit.Options.AdaptiveRate). Every zero
// field means its default, so the zero RateConfig is a complete
// configuration and "adaptiveRate": {} a complete JSON one; each field
// gives its default, chosen for a server the limiter knows nothing about
// (see the constants above for why), and the bound Validate holds it to.
// Rates are for the whole budget, in units per minute; the limiter takes
// 1/Instances of them.
type RateConfig struct {
	// Controller names the controller that sets the rate: "aimd" (the
	// default) or "cubic", in any case.
	Controller string `json:"controller,omitempty"`
	// AIMD tunes the "aimd" controller; nil means its defaults.
	AIMD *AIMD `json:"aimd,omitempty"`
	// Cubic tunes the "cubic" controller; nil means its defaults.
	Cubic *Cubic `json:"cubic,omitempty"`
	// RateController replaces the named controllers with one of your own;
	// Controller, AIMD and Cubic are then left unset.
	RateController RateController `json:"-"`

	// MinUnitsPerMinute is the floor of the rate, so a limiter never
	// stalls: above 0 and at most the maximum. 0 means 60 (one unit a
	// second), or the maximum when that is lower.
	MinUnitsPerMinute float64 `json:"minUnitsPerMinute,omitempty"`
	// MaxUnitsPerMinute is the ceiling, against runaway, not a guess at
	// the limit: finite and above 0. 0 means 600,000 (10,000 a second), or
	// the minimum or initial rate when higher.
	MaxUnitsPerMinute float64 `json:"maxUnitsPerMinute,omitempty"`
	// InitialUnitsPerMinute is the rate at the start, which the slow start
	// doubles every half second while requests wait: between the minimum
	// and the maximum. 0 means 1,125, kept between them.
	InitialUnitsPerMinute float64 `json:"initialUnitsPerMinute,omitempty"`
	// BurstTime is how much time of the rate the bucket holds, at least 1
	// unit: above 0. 0 means 1 s. A request larger than the bucket goes when
	// it is full and drives it below zero.
	BurstTime headroom.Duration `json:"burstTime,omitempty"`
	// MaxWait is the longest a request may wait in the queue: above 0. 0
	// means 100 s.
	MaxWait headroom.Duration `json:"maxWait,omitempty"`
	// DecreaseCooldown is the least time between two cuts. 0 means 1 s;
	// below 0, none.
	DecreaseCooldown headroom.Duration `json:"decreaseCooldown,omitempty"`
	// MaxPause caps the pause after a throttle with a Retry-After. 0 means
	// 30 s; below 0, never pause.
	MaxPause headroom.Duration `json:"maxPause,omitempty"`
	// Instances is how many processes share the budget: 0 or more; 0
	// means 1.
	Instances int `json:"instances,omitempty"`
	// InstanceCounter, when set, tells the limiter of package limit the
	// instance count: it polls it at most once a second, and the count wins
	// over Instances after the first poll. The engine itself takes
	// Rate.SetInstances.
	InstanceCounter InstanceCounter `json:"-"`
	// Disabled measures only: every request is admitted at once, the rate
	// never changes, units and throttles are still counted.
	Disabled bool `json:"disabled,omitempty"`
	// PublishedLimitFraction is the share of a published quota the whole
	// budget may use once Rate.SetPublishedLimit is given one: the maximum
	// becomes min(MaxUnitsPerMinute, PublishedLimitFraction × published).
	// In (0, 1]; 0 means 0.98, 1 − the quota guard's default reserve of 2%.
	PublishedLimitFraction float64 `json:"publishedLimitFraction,omitempty"`
	// Seed seeds the jitter of the probes sent to a dependency that
	// refuses without saying until when (see Rate's closed windows); 0,
	// the default, draws a seed at random. A simulator on virtual time
	// sets it to give the same numbers for the same seed.
	Seed uint64 `json:"seed,omitempty"`
	// BackgroundReserve is the share of the rate kept from background work
	// (level 0 of EnqueueLevel and TryAcquireLevel) while work of a level
	// above asks: background work goes at most at 1 − BackgroundReserve of
	// the rate, and of the rate the last published quota allowed while the
	// server publishes none. In [0, 1); 0, the default, keeps nothing back.
	// The reserve is lent while it is unused (rate_reserve.go). Until a
	// throttle or a published quota has tried the rate, background work
	// goes at most (1 − BackgroundReserve) /
	// BackgroundReserve of the pace of the levels above, or at its share
	// of the initial rate: a slow start's rate says only what was asked
	// for.
	BackgroundReserve float64 `json:"backgroundReserve,omitempty"`
}

// settings is what a Rate runs on: a RateConfig with its defaults applied,
// its durations as time.Duration and its controller chosen.
type settings struct {
	MinUnitsPerMinute, MaxUnitsPerMinute, InitialUnitsPerMinute float64
	Burst, MaxWait, DecreaseCooldown, MaxPause                  time.Duration
	Controller                                                  RateController
	Instances                                                   int
	Disabled                                                    bool
	PublishedLimitFraction, BackgroundReserve                   float64
	Seed                                                        uint64
}

// DefaultRateConfig returns the defaults, every field filled in but the
// controller's (nil, which means AIMD with its defaults).
func DefaultRateConfig() RateConfig {
	return RateConfig{
		MinUnitsPerMinute:      defaultMinUnitsPerMinute,
		MaxUnitsPerMinute:      defaultMaxUnitsPerMinute,
		InitialUnitsPerMinute:  defaultInitialUnitsPerMinute,
		BurstTime:              headroom.Duration(defaultBurst),
		MaxWait:                headroom.Duration(defaultMaxWait),
		DecreaseCooldown:       headroom.Duration(defaultDecreaseCooldown),
		MaxPause:               headroom.Duration(defaultMaxPause),
		Instances:              1,
		PublishedLimitFraction: defaultPublishedLimitFraction,
	}
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// rates returns c's minimum, maximum and initial rates with their defaults
// applied. A default follows the bounds set beside it only when they are
// valid: a bad maximum is one problem, not three.
func (c *RateConfig) rates() (lo, hi, initial float64) {
	hi = c.MaxUnitsPerMinute
	if hi == 0 {
		hi = max(defaultMaxUnitsPerMinute, c.MinUnitsPerMinute, c.InitialUnitsPerMinute)
	}
	lo = c.MinUnitsPerMinute
	if lo == 0 {
		lo = defaultMinUnitsPerMinute
		if hi > 0 {
			lo = min(lo, hi)
		}
	}
	initial = c.InitialUnitsPerMinute
	if initial == 0 {
		initial = defaultInitialUnitsPerMinute
		if lo > 0 && lo <= hi {
			initial = min(max(initial, lo), hi)
		}
	}
	return lo, hi, initial
}

// orDefault is d, or def when d is 0; below 0, 0.
func orDefault(d headroom.Duration, def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return max(time.Duration(d), 0)
}

// settings is c with its defaults applied. c is valid (Validate).
func (c *RateConfig) settings() settings {
	s := settings{
		Burst:                  orDefault(c.BurstTime, defaultBurst),
		MaxWait:                orDefault(c.MaxWait, defaultMaxWait),
		DecreaseCooldown:       orDefault(c.DecreaseCooldown, defaultDecreaseCooldown),
		MaxPause:               orDefault(c.MaxPause, defaultMaxPause),
		Instances:              max(c.Instances, 1),
		Disabled:               c.Disabled,
		PublishedLimitFraction: cmp.Or(c.PublishedLimitFraction, defaultPublishedLimitFraction),
		Seed:                   c.Seed,
		BackgroundReserve:      c.BackgroundReserve,
	}
	s.MinUnitsPerMinute, s.MaxUnitsPerMinute, s.InitialUnitsPerMinute = c.rates()
	switch {
	case c.RateController != nil:
		s.Controller = c.RateController
	case strings.EqualFold(c.Controller, "cubic"):
		s.Controller = deref(c.Cubic)
	default:
		s.Controller = deref(c.AIMD)
	}
	return s
}

// deref is *p, or the zero T for nil.
func deref[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}

// Validate lists every problem with c at once, each a *headroom.ConfigError
// of package "adaptive" naming the field, joined with errors.Join; nil when
// NewRate would succeed.
func (c *RateConfig) Validate() error {
	l := problems.New("adaptive")
	c.check(l)
	return l.Err()
}

// check records c's problems on l.
func (c *RateConfig) check(l *problems.List) {
	add := l.Add
	cubic := strings.EqualFold(c.Controller, "cubic")
	switch {
	case c.Controller == "" || cubic || strings.EqualFold(c.Controller, "aimd"):
	default:
		add("Controller", c.Controller, `"aimd" (the default) or "cubic"`)
	}
	if c.RateController != nil && c.Controller != "" {
		add("Controller", c.Controller, `"" when RateController is set: one controller, never a silent pick`)
	}
	if c.Cubic != nil && (!cubic || c.RateController != nil) {
		add("Cubic", "set", `options only with Controller "cubic"`)
	}
	if c.AIMD != nil && (cubic || c.RateController != nil) {
		add("AIMD", "set", `options only with Controller "aimd" (or none)`)
	}
	lo, hi, initial := c.rates()
	rates := []struct {
		name string
		v    float64
	}{{"MinUnitsPerMinute", lo}, {"MaxUnitsPerMinute", hi}, {"InitialUnitsPerMinute", initial}}
	ok := true
	for _, r := range rates {
		if !(r.v > 0) || !finite(r.v) {
			add(r.name, r.v, "a rate above 0 units per minute")
			ok = false
		}
	}
	if ok {
		if lo > hi {
			add("MinUnitsPerMinute", lo, fmt.Sprintf("at most MaxUnitsPerMinute (%v)", hi))
		} else if initial < lo || initial > hi {
			add("InitialUnitsPerMinute", initial, fmt.Sprintf("between MinUnitsPerMinute (%v) and MaxUnitsPerMinute (%v)", lo, hi))
		}
	}
	if c.BurstTime < 0 {
		add("BurstTime", c.BurstTime, `0 (1s) or a duration above 0, such as "10s"`)
	}
	if c.MaxWait < 0 {
		add("MaxWait", c.MaxWait, `0 (100s) or a duration above 0, such as "30s"`)
	}
	if c.Instances < 0 {
		add("Instances", c.Instances, "1 or more (0 means 1)")
	}
	if f := c.PublishedLimitFraction; !(f >= 0 && f <= 1) {
		add("PublishedLimitFraction", f, "a fraction in (0, 1], such as 0.98 (0 means 0.98)")
	}
	if f := c.BackgroundReserve; !(f >= 0 && f < 1) {
		add("BackgroundReserve", f, "a fraction in [0, 1), such as 0.2 (0 keeps nothing back)")
	}
	if c.AIMD != nil {
		c.AIMD.check(l.At("AIMD"))
	}
	if c.Cubic != nil {
		c.Cubic.check(l.At("Cubic"))
	}
	switch ctl := c.RateController.(type) {
	case AIMD:
		ctl.check(l.At("AIMD"))
	case Cubic:
		ctl.check(l.At("Cubic"))
	}
}

// check records a's problems on l, the List of the setting that holds a.
func (a AIMD) check(l *problems.List) {
	if f := a.DecreaseFactor; f != 0 && (!(f > 0 && f < 1)) {
		l.Add("DecreaseFactor", f, "a factor between 0 and 1, such as 0.7")
	}
	if s := a.IncreaseStep; !(s >= 0) || !finite(s) {
		l.Add("IncreaseStep", s, "a step above 0 units per minute")
	}
	if a.IncreaseInterval < 0 {
		l.Add("IncreaseInterval", a.IncreaseInterval, "0 (10s) or a duration above 0, such as \"10s\"")
	}
}

// check records c's problems on l, the List of the setting that holds c.
func (c Cubic) check(l *problems.List) {
	if b := c.Beta; b != 0 && (!(b > 0 && b < 1)) {
		l.Add("Beta", b, "a factor between 0 and 1, such as 0.7")
	}
	if s := c.ScaleConstant; !(s >= 0) || !finite(s) {
		l.Add("ScaleConstant", s, "a constant above 0, such as 0.4")
	}
}

// The checks of the configurations other packages' options hold.
func init() {
	problems.Register((*ConcurrencyConfig).check)
	problems.Register((*RateConfig).check)
}
