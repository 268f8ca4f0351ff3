package sim

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
)

// A Setting is one option of a mode that a reader may change: a field of
// the engine core's configuration, named as the library names it, with
// its default and the range the page offers.
type Setting struct {
	// Name is the field's name in the library: "IncreaseStep",
	// "MaxUnitsPerMinute", "ReserveFraction".
	Name string
	// Group says whose option it is: "controller" (the rate controller's),
	// "limiter" (the engine's bounds and queue) or "guard" (the quota
	// guard's).
	Group string
	// Help says what the option does, in one sentence.
	Help string
	// Unit is "units a minute", "s", "requests", or "" for a plain number.
	Unit string
	// Default is the value the mode runs with when the option is not set.
	Default float64
	// Min and Max bound what With takes; the engine may refuse a
	// combination inside them (a minimum above the maximum).
	Min, Max float64
	// Whole says the option takes whole numbers only (a count).
	Whole bool
}

// settable describes how to rebuild a mode with its options: the mode's
// settings and a constructor that reads each one by name.
type settable struct {
	settings []Setting
	build    func(v func(name string) float64) Mode
}

// Settings lists the options of m a reader may change, with their
// defaults; nil for a mode that has none (no limiter).
func (m Mode) Settings() []Setting {
	return slices.Clone(settableModes()[m.Name].settings)
}

// With returns m with the options in values set, by Setting.Name; an
// option not in values keeps its default. An unknown name, a value out of
// its range and a combination the engine refuses are each a
// *headroom.ConfigError, all listed at once (errors.Join).
func (m Mode) With(values map[string]float64) (Mode, error) {
	s, ok := settableModes()[m.Name]
	if !ok {
		if len(values) == 0 {
			return m, nil
		}
		s = settable{} // every value is then an unknown name
	}
	var errs []error
	bad := func(field string, value any, want string) {
		errs = append(errs, &headroom.ConfigError{Package: "sim", Field: m.Name + "." + field, Value: value, Want: want})
	}
	names := make([]string, 0, len(values))
	for name := range values {
		names = append(names, name)
	}
	slices.Sort(names) // every problem, in a stable order
	for _, name := range names {
		v := values[name]
		i := slices.IndexFunc(s.settings, func(st Setting) bool { return st.Name == name })
		switch {
		case i < 0:
			bad(name, v, "one of the mode's settings: "+settingNames(s.settings))
		case !(v >= s.settings[i].Min && v <= s.settings[i].Max):
			bad(name, v, fmt.Sprintf("%v to %v", s.settings[i].Min, s.settings[i].Max))
		case s.settings[i].Whole && v != math.Trunc(v):
			bad(name, v, "a whole number")
		}
	}
	if len(errs) > 0 {
		return Mode{}, errors.Join(errs...)
	}
	built := s.build(func(name string) float64 {
		if v, ok := values[name]; ok {
			return v
		}
		i := slices.IndexFunc(s.settings, func(st Setting) bool { return st.Name == name })
		return s.settings[i].Default
	})
	// Build one instance's limiter now, so that a combination the engine
	// refuses is an error here rather than in the middle of a run.
	if _, err := built.newLimiter(limiterEnv{instances: 1, seed: 1}); err != nil {
		return Mode{}, err
	}
	return built, nil
}

func settingNames(s []Setting) string {
	var names []string
	for _, st := range s {
		names = append(names, st.Name)
	}
	if len(names) == 0 {
		return "(none)"
	}
	return strings.Join(names, ", ")
}

// seconds is v seconds as a duration.
func seconds(v float64) time.Duration { return time.Duration(math.Round(v * float64(time.Second))) }

// settableModes is every mode that has options, by Mode.Name.
func settableModes() map[string]settable {
	rate := rateSettings()
	return map[string]settable{
		"fixed rate": {
			settings: []Setting{{Name: "UnitsPerMinute", Group: "limiter", Unit: "units a minute",
				Help: "The rate for the whole budget: the minimum, the maximum and the initial rate.", Default: fixedRateUnitsPerMinute, Min: 1, Max: 1e7}},
			build: func(v func(string) float64) Mode { return fixedRateMode(v("UnitsPerMinute")) },
		},
		"AIMD": {
			settings: append(aimdSettings(), rate...),
			build: func(v func(string) float64) Mode {
				return rateMode("AIMD", rateConfig(v, "aimd"))
			},
		},
		"CUBIC": {
			settings: append(cubicSettings(), rate...),
			build: func(v func(string) float64) Mode {
				return rateMode("CUBIC", rateConfig(v, "cubic"))
			},
		},
		"adaptive concurrency": {settings: concurrencySettings(), build: buildConcurrency},
		"quota guard": {
			settings: append([]Setting{reserveSetting()}, queueSettings()...),
			build: func(v func(string) float64) Mode {
				return quotaGuardMode(guardOptions{Guard: guardWithReserve(v), QueueLimit: int(v("QueueLimit")), MaxWait: seconds(v("MaxWait"))})
			},
		},
		"CUBIC + quota": {
			settings: append(append(cubicSettings(), publishedSetting(), reserveSetting()), rate...),
			build: func(v func(string) float64) Mode {
				return combinedMode("CUBIC + quota", rateConfig(v, "cubic"),
					guardOptions{Guard: guardWithReserve(v), Cap: v("PublishedLimitFraction")})
			},
		},
	}
}

func aimdSettings() []Setting {
	return []Setting{
		{Name: "IncreaseStep", Group: "controller", Unit: "units a minute", Default: 120, Min: 0, Max: 1e6,
			Help: "What a success adds to the whole budget's rate, once IncreaseInterval has passed and requests waited."},
		{Name: "IncreaseInterval", Group: "controller", Unit: "s", Default: 10, Min: 0.001, Max: 3600,
			Help: "The least time between two steps up."},
		{Name: "DecreaseFactor", Group: "controller", Default: 0.7, Min: 0.01, Max: 0.99,
			Help: "What a cut multiplies the rate by."},
	}
}

func aimdController(v func(string) float64) adaptive.AIMD {
	return adaptive.AIMD{IncreaseStep: v("IncreaseStep"), IncreaseInterval: headroom.Duration(seconds(v("IncreaseInterval"))), DecreaseFactor: v("DecreaseFactor")}
}

func cubicSettings() []Setting {
	return []Setting{
		{Name: "Beta", Group: "controller", Default: 0.7, Min: 0.01, Max: 0.99,
			Help: "The share of the rate at the last cut that a cut keeps."},
		{Name: "ScaleConstant", Group: "controller", Unit: "units/s³", Default: 0, Min: 0, Max: 1e6,
			Help: "C of the curve for the whole budget; 0: a period of 20 s at any rate (0.4 is the AWS SDK's)."},
	}
}

func cubicController(v func(string) float64) adaptive.Cubic {
	return adaptive.Cubic{Beta: v("Beta"), ScaleConstant: v("ScaleConstant")}
}

// rateSettings are the adaptive rate limiter's own options, at the
// library's defaults. (Its queue's bound is the shell's, here the
// simulator's, and not an option of the engine.)
func rateSettings() []Setting {
	d := adaptive.DefaultRateConfig()
	return []Setting{
		{Name: "InitialUnitsPerMinute", Group: "limiter", Unit: "units a minute", Default: d.InitialUnitsPerMinute, Min: 1, Max: 1e7,
			Help: "The whole budget's rate at the start, which the slow start doubles every half second while requests wait."},
		{Name: "MinUnitsPerMinute", Group: "limiter", Unit: "units a minute", Default: d.MinUnitsPerMinute, Min: 1, Max: 1e7,
			Help: "The floor of the whole budget's rate."},
		{Name: "MaxUnitsPerMinute", Group: "limiter", Unit: "units a minute", Default: d.MaxUnitsPerMinute, Min: 1, Max: 1e7,
			Help: "The ceiling of the whole budget's rate."},
		{Name: "BurstTime", Group: "limiter", Unit: "s", Default: secondsOf(d.BurstTime), Min: 0.001, Max: 3600,
			Help: "How much time of the rate the bucket holds."},
		{Name: "MaxWait", Group: "limiter", Unit: "s", Default: secondsOf(d.MaxWait), Min: 0.001, Max: 86400,
			Help: "The longest a request may wait; then it is rejected."},
		{Name: "DecreaseCooldown", Group: "limiter", Unit: "s", Default: secondsOf(d.DecreaseCooldown), Min: -1, Max: 3600,
			Help: "The least time between two cuts; below 0, none."},
		{Name: "MaxPause", Group: "limiter", Unit: "s", Default: secondsOf(d.MaxPause), Min: -1, Max: 3600,
			Help: "The longest pause a Retry-After causes; below 0, it never pauses."},
	}
}

// queueSettings bound the queue the simulator keeps for a core without
// one, as a shell would.
func queueSettings() []Setting {
	return []Setting{
		{Name: "QueueLimit", Group: "limiter", Unit: "requests", Default: queueLimit, Min: 0, Max: 1e6, Whole: true,
			Help: "How many requests may wait; the next one is rejected."},
		{Name: "MaxWait", Group: "limiter", Unit: "s", Default: maxWait.Seconds(), Min: 0.001, Max: 86400,
			Help: "The longest a request may wait; then it is rejected."},
	}
}

func secondsOf(d headroom.Duration) float64 { return time.Duration(d).Seconds() }

// rateConfig is the adaptive rate limiter's configuration with the
// settings' values and the named controller: "aimd" or "cubic".
func rateConfig(v func(string) float64, controller string) adaptive.RateConfig {
	cfg := adaptive.DefaultRateConfig()
	switch controller {
	case "cubic":
		c := cubicController(v)
		cfg.Controller, cfg.Cubic = controller, &c
	default:
		a := aimdController(v)
		cfg.Controller, cfg.AIMD = controller, &a
	}
	cfg.InitialUnitsPerMinute, cfg.MinUnitsPerMinute, cfg.MaxUnitsPerMinute = v("InitialUnitsPerMinute"), v("MinUnitsPerMinute"), v("MaxUnitsPerMinute")
	cfg.BurstTime, cfg.MaxWait = headroom.Duration(seconds(v("BurstTime"))), headroom.Duration(seconds(v("MaxWait")))
	cfg.DecreaseCooldown, cfg.MaxPause = headroom.Duration(seconds(v("DecreaseCooldown"))), headroom.Duration(seconds(v("MaxPause")))
	return cfg
}

func reserveSetting() Setting {
	return Setting{Name: "ReserveFraction", Group: "guard", Default: 0.02, Min: 0, Max: 0.99,
		Help: "The share of the published limit the guard keeps back: an attempt waits while the remaining allowance less its cost is inside it."}
}

func guardWithReserve(v func(string) float64) quota.Options {
	f := v("ReserveFraction")
	return quota.Options{ReserveFraction: &f}
}

func publishedSetting() Setting {
	return Setting{Name: "PublishedLimitFraction", Group: "guard", Default: adaptive.DefaultRateConfig().PublishedLimitFraction, Min: 0.01, Max: 1,
		Help: "The share of the published quota the whole budget's rate is held to."}
}

func concurrencySettings() []Setting {
	d := defaultConcurrency()
	return []Setting{
		{Name: "Initial", Group: "controller", Unit: "requests", Default: float64(d.Initial), Min: 1, Max: 1e5, Whole: true,
			Help: "The limit of requests in flight before anything is measured."},
		{Name: "Minimum", Group: "controller", Unit: "requests", Default: float64(d.Minimum), Min: 1, Max: 1e5, Whole: true,
			Help: "The floor of the limit."},
		{Name: "Maximum", Group: "controller", Unit: "requests", Default: float64(d.Maximum), Min: 1, Max: 1e5, Whole: true,
			Help: "The ceiling of the limit."},
		{Name: "Multiple", Group: "controller", Default: d.Multiple, Min: 1.01, Max: 100,
			Help: "How many times the baseline latency a round's fastest call may take before the round counts as queueing."},
		{Name: "DecreaseFactor", Group: "controller", Default: d.DecreaseFactor, Min: 0.01, Max: 0.99,
			Help: "What a queueing round multiplies the limit by."},
	}
}

// defaultConcurrency is the concurrency engine's configuration with its
// defaults filled in.
func defaultConcurrency() adaptive.ConcurrencyConfig {
	c, err := adaptive.NewConcurrency(adaptive.ConcurrencyConfig{})
	if err != nil {
		panic("sim: the concurrency engine refuses its zero configuration: " + err.Error())
	}
	return c.Config()
}

func buildConcurrency(v func(string) float64) Mode {
	return concurrencyMode(adaptive.ConcurrencyConfig{
		Initial: int(v("Initial")), Minimum: int(v("Minimum")), Maximum: int(v("Maximum")),
		Multiple: v("Multiple"), DecreaseFactor: v("DecreaseFactor"),
	})
}
