// Package page is the interactive page's side of the simulator: what its
// controls offer, the run a panel's controls describe, the figures of a
// live run as the page shows them, and the comparison of the modes. It
// runs in the browser, compiled to WebAssembly; the page's JavaScript
// only draws and wires controls, and every figure comes from here.
package page

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/sim"
)

// World is a panel's controls of the world, named as the command's flags
// name them. Seconds are whole or fractional seconds.
type World struct {
	Seed      uint64  `json:"seed"`
	Instances int     `json:"instances"`
	Quota     int     `json:"quota"`  // units per window
	Demand    float64 `json:"demand"` // units a minute for each instance
	Duration  float64 `json:"duration"`
	Scenario  string  `json:"scenario"`
	Server    string  `json:"server"`
	Window    float64 `json:"window"`
	Burst     int     `json:"burst"` // a bucket's, for the kinds that have one
	Publish   string  `json:"publish"`
}

// Settings are a panel's controls: the world, the mode, and the mode's
// options that differ from their defaults.
type Settings struct {
	World
	Mode    string             `json:"mode"`
	Options map[string]float64 `json:"options,omitempty"`
}

// The command's defaults, as its flags have them: a flag at its default is
// left out of the command line the page shows.
const (
	defaultSeed      = 42
	defaultInstances = 2
	defaultDemand    = 2000
	defaultDuration  = 15 * time.Minute
	defaultScenario  = "drop"
	defaultServer    = "sliding-log"
	defaultWindow    = time.Minute
	defaultPublish   = "draft-3"
	// defaultPerSecond is the quota the command takes without -quota: 50
	// units a second over the window.
	defaultPerSecond = 50
)

// DefaultWorld is the command's world without flags: the seeds'.
func DefaultWorld() World {
	return World{Seed: defaultSeed, Instances: defaultInstances, Quota: defaultPerSecond * 60, Demand: defaultDemand,
		Duration: defaultDuration.Seconds(), Scenario: defaultScenario, Server: defaultServer,
		Window: defaultWindow.Seconds(), Publish: defaultPublish}
}

// Config is the run w describes, as the command builds it from the same
// flags, or every problem with w at once.
func (w World) Config() (sim.Config, error) {
	var errs []error
	if w.Seed < 1 {
		errs = append(errs, &headroom.ConfigError{Package: "page", Field: "seed", Value: w.Seed, Want: "1 or more"})
	}
	kind, err := sim.ServerKindNamed(w.Server)
	if err != nil {
		errs = append(errs, err)
	}
	publish, err := sim.PublishNamed(w.Publish)
	if err != nil {
		errs = append(errs, err)
	}
	window := seconds(w.Window)
	if window < time.Second || window > 24*time.Hour || window%time.Second != 0 {
		errs = append(errs, &headroom.ConfigError{Package: "page", Field: "window", Value: w.Window, Want: "whole seconds from 1 to 86,400"})
	}
	cfg := sim.Config{Seed: w.Seed, Instances: w.Instances, Quota: w.Quota, Demand: w.Demand, Duration: seconds(w.Duration),
		Scenario: strings.ToLower(w.Scenario), Server: sim.Server{Kind: kind, Window: window, Publish: publish}}
	if kind != "" && sim.HasBurst(kind) {
		cfg.Server.Burst = w.Burst
	}
	// A zero is a default in sim.Config and a value like any other on the
	// page, as on the command line: validate the values as given.
	given := cfg.Defaults()
	given.Instances, given.Quota, given.Demand, given.Duration = cfg.Instances, cfg.Quota, cfg.Demand, cfg.Duration
	if len(errs) == 0 {
		errs = append(errs, given.Validate())
	}
	if err := errors.Join(errs...); err != nil {
		return sim.Config{}, err
	}
	return given, nil
}

// ModeFlag is a mode's name as the command's -modes takes it:
// "no-limiter", "CUBIC+quota".
func ModeFlag(name string) string {
	return strings.ReplaceAll(strings.ReplaceAll(name, " + ", "+"), " ", "-")
}

// Build is the run the panel's controls describe: the world and the mode
// with its options, or every problem with them.
func (s Settings) Build() (sim.Config, sim.Mode, error) {
	cfg, cerr := s.Config()
	m, merr := sim.ModeNamed(s.Mode)
	if merr == nil {
		m, merr = m.With(s.Options)
	}
	if err := errors.Join(cerr, merr); err != nil {
		return sim.Config{}, sim.Mode{}, err
	}
	return cfg, m, nil
}

// Flags is the command line that runs what the world describes, for the
// modes named (sim.Mode names) with the options given: the flags that
// differ from the command's defaults, in the order its usage lists them.
func (w World) Flags(modes []string, options map[string]float64) []string {
	var f []string
	add := func(name, value string) { f = append(f, "-"+name, value) }
	if w.Seed != defaultSeed {
		add("seed", strconv.FormatUint(w.Seed, 10))
	}
	if w.Instances != defaultInstances {
		add("instances", strconv.Itoa(w.Instances))
	}
	if w.Demand != defaultDemand {
		add("demand", number(w.Demand))
	}
	if d := seconds(w.Duration); d != defaultDuration {
		add("duration", durationFlag(d))
	}
	if w.Scenario != defaultScenario {
		add("scenario", w.Scenario)
	}
	if w.Server != defaultServer {
		add("server", w.Server)
	}
	window := seconds(w.Window)
	if window != defaultWindow {
		add("window", durationFlag(window))
	}
	if float64(w.Quota) != defaultPerSecond*math.Max(window.Seconds(), 1) {
		add("quota", strconv.Itoa(w.Quota))
	}
	if sim.HasBurst(w.Server) && w.Burst != 0 {
		add("burst", strconv.Itoa(w.Burst))
	}
	if w.Publish != defaultPublish {
		add("publish", w.Publish)
	}
	var names []string
	for _, m := range modes {
		names = append(names, ModeFlag(m))
	}
	add("modes", strings.Join(names, ","))
	if len(options) > 0 {
		keys := make([]string, 0, len(options))
		for k := range options {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		var pairs []string
		for _, k := range keys {
			pairs = append(pairs, k+"="+number(options[k]))
		}
		add("set", strings.Join(pairs, ","))
	}
	return f
}

// CommandLine is flags as one would type them after the command's name.
func CommandLine(flags []string) string {
	return strings.Join(append([]string{"go run ./cmd/headroom-sim"}, flags...), " ")
}

// number writes v as the shortest decimal that reads back as v.
func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// durationFlag writes d as a -duration or -window flag takes it: "10m",
// "90s", "1.5s".
func durationFlag(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	case d%time.Second == 0:
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return d.String()
}

// seconds is v seconds as a duration, to the nanosecond.
func seconds(v float64) time.Duration {
	if !(math.Abs(v) < float64(math.MaxInt64)/float64(time.Second)) {
		return -1 // NaN or out of range: refused by what checks it
	}
	return time.Duration(math.Round(v * float64(time.Second)))
}
