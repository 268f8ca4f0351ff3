package adaptivetest

import (
	"fmt"
	"math"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// Phase is a stretch of model time, up to Until, with a given number of
// workers.
type Phase struct {
	Until   time.Duration
	Workers int
}

// Config is one scenario.
type Config struct {
	// Service time: Floor plus an exponential variate of mean Exp.
	Floor, Exp time.Duration
	// Load is the offered arrival rate, in calls per second.
	Load float64
	// Phases follow one another from time 0; the run ends with the last.
	Phases []Phase
	Seed   uint64
	// Every is how often the limit is sampled (0 means 100 ms).
	Every time.Duration
	// Band is the relative distance from the worker count that counts as
	// "following" it (0 means 0.2), and Hold how long the limit's trailing
	// one-second mean must stay inside the band (0 means 5 s).
	Band float64
	Hold time.Duration
}

// UnloadedP99 is the p99 latency of a call that never queues.
func (c Config) UnloadedP99() time.Duration {
	return c.Floor + time.Duration(float64(c.Exp)*math.Log(100))
}

// validate returns every problem with c at once, joined with errors.Join;
// each is a *headroom.ConfigError. It returns nil when Run can use c.
func (c Config) validate() error {
	l := problems.New("adaptivetest")
	add := l.Add
	if c.Floor < 0 {
		add("Floor", c.Floor, "0 or more")
	}
	if c.Exp < 0 {
		add("Exp", c.Exp, "0 or more")
	}
	if !(c.Load > 0) || math.IsInf(c.Load, 0) {
		add("Load", c.Load, "a finite rate above 0 calls a second")
	}
	if len(c.Phases) == 0 {
		add("Phases", "none", "at least one phase")
	}
	var from time.Duration
	for i, p := range c.Phases {
		if p.Until <= from {
			add(fmt.Sprintf("Phases[%d].Until", i), p.Until, fmt.Sprintf("after the phase before (%v)", from))
		}
		if p.Workers < 0 {
			add(fmt.Sprintf("Phases[%d].Workers", i), p.Workers, "0 or more")
		}
		from = max(from, p.Until)
	}
	if c.Every < 0 {
		add("Every", c.Every, "0 (100ms) or more")
	}
	if c.Band < 0 || c.Band != c.Band {
		add("Band", c.Band, "0 (0.2) or more")
	}
	if c.Hold < 0 {
		add("Hold", c.Hold, "0 (5s) or more")
	}
	return l.Err()
}

func (c Config) withDefaults() Config {
	if c.Every == 0 {
		c.Every = 100 * time.Millisecond
	}
	if c.Band == 0 {
		c.Band = 0.2
	}
	if c.Hold == 0 {
		c.Hold = 5 * time.Second
	}
	return c
}
