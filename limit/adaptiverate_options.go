package limit

import (
	"strings"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// AdaptiveRateOptions configures the throttle-driven adaptive rate limiter:
// a token bucket in units whose rate is learned from the throttles the
// dependency answers, with AIMD (the default) or CUBIC.
//
// Rates are units per minute for the whole budget; with Instances above 1
// each process takes its share. A zero field means its default, so
// "adaptiveRate": {} is a complete configuration. The defaults are for a
// server the limiter knows nothing about (adaptive.DefaultRateConfig says
// why each): starting at 1,125 a minute and doubling every half second
// while requests wait until the first throttle, at most 10,000 a second,
// never below one unit a second, a bucket of 1 s of the rate.
type AdaptiveRateOptions struct {
	// Controller is "aimd" (the default) or "cubic".
	Controller string `json:"controller,omitempty"`
	// MinUnitsPerMinute is the floor of the rate; default 60, or
	// MaxUnitsPerMinute if lower.
	MinUnitsPerMinute float64 `json:"minUnitsPerMinute,omitempty"`
	// MaxUnitsPerMinute is the ceiling of the rate; default 600,000 (or the
	// minimum or initial rate if higher).
	MaxUnitsPerMinute float64 `json:"maxUnitsPerMinute,omitempty"`
	// InitialUnitsPerMinute is the starting rate; default 1,125, kept
	// between the minimum and the maximum.
	InitialUnitsPerMinute float64 `json:"initialUnitsPerMinute,omitempty"`
	// BurstTime is how much time of the rate the bucket holds; default
	// "1s". The bucket holds at least 1 unit, and a request larger than the
	// bucket goes when it is full and drives it below zero. (Callers wait
	// in the queue Options.QueueLimit sets, in units, as with every shape.)
	BurstTime headroom.Duration `json:"burstTime,omitempty"`
	// MaxWait is the longest a request may wait; default "100s".
	MaxWait headroom.Duration `json:"maxWait,omitempty"`
	// DecreaseCooldown is the least time between two cuts; default "1s";
	// negative for none.
	DecreaseCooldown headroom.Duration `json:"decreaseCooldown,omitempty"`
	// MaxPause caps the pause after a throttle with a Retry-After; default
	// "30s"; negative never pauses.
	MaxPause headroom.Duration `json:"maxPause,omitempty"`
	// Instances is how many processes share the budget; default 1. See
	// also InstanceCounter and AdaptiveRateLimiter.SetInstances.
	Instances int `json:"instances,omitempty"`
	// Disabled measures only: the limiter admits every request and never
	// changes its rate, but still records units and throttles.
	Disabled bool `json:"disabled,omitempty"`
	// AIMD tunes the "aimd" controller.
	AIMD *AIMDOptions `json:"aimd,omitempty"`
	// Cubic tunes the "cubic" controller.
	Cubic *CubicOptions `json:"cubic,omitempty"`
	// PublishedLimitFraction is the share of a published quota the whole
	// budget uses once AdaptiveRateLimiter.SetPublishedLimit gives one: the
	// rate becomes min(MaxUnitsPerMinute, fraction × published); in (0, 1],
	// default 0.98 (1 − the quota guard's default reserve of 2%).
	PublishedLimitFraction float64 `json:"publishedLimitFraction,omitempty"`

	// RateController replaces Controller with your own.
	RateController adaptive.RateController `json:"-"`
	// InstanceCounter, when set, is polled at most once a second for the
	// instance count, and wins over Instances after the first poll.
	InstanceCounter adaptive.InstanceCounter `json:"-"`
}

// AIMDOptions tunes AIMD; a zero field means its default.
type AIMDOptions struct {
	// DecreaseFactor multiplies the rate on a cut; default 0.7.
	DecreaseFactor float64 `json:"decreaseFactor,omitempty"`
	// IncreaseStep is added, for the whole budget, after each
	// IncreaseInterval in which requests waited; default 120 units a
	// minute.
	IncreaseStep float64 `json:"increaseStep,omitempty"`
	// IncreaseInterval is the least time between two steps; default "10s".
	IncreaseInterval headroom.Duration `json:"increaseInterval,omitempty"`
}

// CubicOptions tunes CUBIC; a zero field means its default (the AWS SDK's).
type CubicOptions struct {
	// Beta is the fraction of the rate kept on a cut; default 0.7.
	Beta float64 `json:"beta,omitempty"`
	// ScaleConstant is C for the whole budget, in units per second per
	// second³; default 0.4.
	ScaleConstant float64 `json:"scaleConstant,omitempty"`
}

// config turns the options into the engine's configuration, defaults
// applied.
func (a *AdaptiveRateOptions) config() adaptive.RateConfig {
	def := adaptive.DefaultRateConfig()
	c := def
	c.MaxUnitsPerMinute = a.MaxUnitsPerMinute
	if c.MaxUnitsPerMinute == 0 {
		c.MaxUnitsPerMinute = max(def.MaxUnitsPerMinute, a.MinUnitsPerMinute, a.InitialUnitsPerMinute)
	}
	// A default follows the bounds set beside it only when they are valid:
	// a bad maximum is one problem, not three.
	c.MinUnitsPerMinute = a.MinUnitsPerMinute
	if c.MinUnitsPerMinute == 0 {
		c.MinUnitsPerMinute = def.MinUnitsPerMinute
		if c.MaxUnitsPerMinute > 0 {
			c.MinUnitsPerMinute = min(c.MinUnitsPerMinute, c.MaxUnitsPerMinute)
		}
	}
	c.InitialUnitsPerMinute = a.InitialUnitsPerMinute
	if c.InitialUnitsPerMinute == 0 {
		c.InitialUnitsPerMinute = def.InitialUnitsPerMinute
		if lo, hi := c.MinUnitsPerMinute, c.MaxUnitsPerMinute; lo > 0 && lo <= hi {
			c.InitialUnitsPerMinute = min(max(c.InitialUnitsPerMinute, lo), hi)
		}
	}
	if a.BurstTime != 0 {
		c.Burst = time.Duration(a.BurstTime)
	}
	if a.MaxWait != 0 {
		c.MaxWait = time.Duration(a.MaxWait)
	}
	if a.DecreaseCooldown != 0 {
		c.DecreaseCooldown = max(time.Duration(a.DecreaseCooldown), 0)
	}
	if a.MaxPause != 0 {
		c.MaxPause = max(time.Duration(a.MaxPause), 0)
	}
	c.Instances = max(a.Instances, 1)
	if a.Instances < 0 {
		c.Instances = a.Instances // reported by Problems
	}
	c.Disabled = a.Disabled
	if a.PublishedLimitFraction != 0 {
		c.PublishedLimitFraction = a.PublishedLimitFraction
	}
	switch {
	case a.RateController != nil:
		c.Controller = a.RateController
	case strings.EqualFold(a.Controller, "cubic"):
		var k adaptive.Cubic
		if a.Cubic != nil {
			k = adaptive.Cubic{Beta: a.Cubic.Beta, ScaleConstant: a.Cubic.ScaleConstant}
		}
		c.Controller = k
	default:
		var k adaptive.AIMD
		if a.AIMD != nil {
			k = adaptive.AIMD{DecreaseFactor: a.AIMD.DecreaseFactor, IncreaseStep: a.AIMD.IncreaseStep, IncreaseInterval: time.Duration(a.AIMD.IncreaseInterval)}
		}
		c.Controller = k
	}
	return c
}

// validate lists every problem with a, each an *headroom.ConfigError whose Field
// starts with "AdaptiveRate.".
func (a *AdaptiveRateOptions) validate() []error {
	var errs []error
	add := func(field string, value any, want string) {
		errs = append(errs, &headroom.ConfigError{Package: "limit", Field: "AdaptiveRate." + field, Value: value, Want: want})
	}
	cubic := strings.EqualFold(a.Controller, "cubic")
	switch {
	case a.Controller == "" || cubic || strings.EqualFold(a.Controller, "aimd"):
	default:
		add("Controller", a.Controller, `"aimd" (the default) or "cubic"`)
	}
	if a.RateController != nil && a.Controller != "" {
		add("Controller", a.Controller, `"" when RateController is set: one controller, never a silent pick`)
	}
	if a.Cubic != nil && (!cubic || a.RateController != nil) {
		add("Cubic", "set", `options only with Controller "cubic"`)
	}
	if a.AIMD != nil && (cubic || a.RateController != nil) {
		add("AIMD", "set", `options only with Controller "aimd" (or none)`)
	}
	c := a.config()
	for _, p := range c.Problems() {
		if p.Field == "Burst" {
			p.Field = "BurstTime"
		}
		add(p.Field, p.Value, p.Want)
	}
	return errs
}
