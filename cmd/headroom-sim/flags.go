package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/headroom-go/headroom/sim"
)

// options are the parsed flags.
type options struct {
	// cfgs holds one configuration per server asked for (-server, -window
	// and -publish take lists); cfg is the first, the only one unless the
	// command prints the table of servers.
	cfg    sim.Config
	cfgs   []sim.Config
	modes  []sim.Mode
	format string
	plot   string
	seeds  int
	// goals prints each cell's figure beside the ideal client's and its
	// goal, and how many cells meet theirs.
	goals bool
	// serve and buildSite, when set, are all the command does: serve the
	// interactive page at an address, or build it into a folder.
	serve, buildSite string
}

// parse reads the flags. It writes nothing: -h returns flag.ErrHelp, and
// run prints the usage to stdout; an error is printed once, by run.
func parse(args []string) (*options, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("headroom-sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		instances = fs.Int("instances", 2, "instances (processes) that share the quota at the start")
		demand    = fs.Float64("demand", 2000, "demand of each instance, units a minute (Poisson); scenario mixed, unless given: three quotas over the instances")
		duration  = fs.Duration("duration", 15*time.Minute, "virtual time to simulate")
		seed      = fs.Uint64("seed", 42, "random seed (1 or more): the same seed gives the same numbers")
		scenario  = fs.String("scenario", "drop", "steady | drop (another client takes half of the quota for 60 s after minute 5) | join (one more instance joins after minute 5)")
		modes     = fs.String("modes", "all", "comma-separated modes, or all: "+strings.Join(modeFlagNames(), ","))
		format    = fs.String("format", "table", "table | markdown (the table in Markdown) | csv | json")
		plot      = fs.String("plot", "", "also draw rate, quota and 429s over time for each mode to FILE.svg or FILE.png")
		seeds     = fs.Int("seeds", 1, "run this many seeds from -seed on and print the median, minimum and maximum of each column")
		goals     = fs.Bool("goals", false, "print each server's figure (share of the allowance / 429 share) beside the ideal client's, its goal\n"+
			"and whether it meets it, and how many meet theirs (docs/simulator.md, \"Goals\")")
		settings = fs.String("set", "", "options of the modes, NAME=VALUE,...: IncreaseStep=600,MaxUnitsPerMinute=2700 (each mode that has one takes it)")
		serve    = fs.String("serve", "", "build the interactive page and serve it at this address, such as 127.0.0.1:8080; no other flag")
		buildTo  = fs.String("build-site", "", "build the interactive page into this folder, for any static host; no other flag")
		server   = addServerFlags(fs)
	)
	if err := fs.Parse(args); err != nil {
		return nil, fs, err // flag.ErrHelp for -h
	}
	if fs.NArg() > 0 {
		return nil, fs, fmt.Errorf("unexpected argument %q: every setting is a flag", fs.Arg(0))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if set["serve"] || set["build-site"] {
		o, err := pageOptions(*serve, *buildTo, set)
		return o, fs, err
	}
	o := &options{format: *format, plot: *plot, seeds: *seeds, goals: *goals}
	errs := checkOutput(*seed, *seeds, *format, *plot)
	base := sim.Config{
		Seed: *seed, Instances: *instances, Demand: *demand,
		Duration: *duration, Scenario: strings.ToLower(*scenario),
	}
	if base.Scenario == "mixed" && !set["demand"] {
		base.Demand = 0 // the scenario's own: three quotas over the instances
	}
	o.cfgs, errs = server.configs(base, set, errs)
	check := o.cfgs
	if len(check) == 0 {
		// No server came out of the flags (their problems are listed
		// already): the other flags are still checked, on the seeds'.
		check = []sim.Config{base}
		check[0].Quota = *server.quota
	}
	errs = validateGiven(check, base, errs)
	if len(o.cfgs) > 0 {
		o.cfg = o.cfgs[0]
	}
	if len(o.cfgs) > 1 && *plot != "" {
		errs = append(errs, errors.New("-plot draws one server: give one -server, -window and -publish"))
	}
	if *goals && *plot != "" {
		errs = append(errs, errors.New("-plot and -goals: -goals prints a table of goals; leave out -plot"))
	}
	o.modes, errs = parseModes(*modes, errs)
	o.modes, errs = applySettings(*settings, o.modes, errs)
	if err := errors.Join(errs...); err != nil {
		return nil, fs, err
	}
	return o, fs, nil
}

// checkOutput lists the problems with the flags that choose the seeds and
// what is printed.
func checkOutput(seed uint64, seeds int, format, plot string) []error {
	var errs []error
	if seed == 0 {
		errs = append(errs, errors.New("-seed 0: want 1 or more"))
	}
	if seeds > 1 && seed > math.MaxUint64-uint64(seeds-1) {
		errs = append(errs, fmt.Errorf("-seed %d with -seeds %d runs past the largest seed: want -seed at most %d",
			seed, seeds, uint64(math.MaxUint64)-uint64(seeds-1)))
	}
	if seeds < 1 || seeds > 1000 {
		errs = append(errs, fmt.Errorf("-seeds %d: want 1 to 1000", seeds))
	}
	if seeds > 1 && plot != "" {
		errs = append(errs, errors.New("-plot draws one seed: leave out -seeds"))
	}
	switch format {
	case "table", "markdown", "csv", "json":
	default:
		errs = append(errs, fmt.Errorf("-format %q: want table, csv or json (or markdown: the table in Markdown)", format))
	}
	if plot != "" {
		switch strings.ToLower(filepath.Ext(plot)) {
		case ".svg", ".png":
		default:
			errs = append(errs, fmt.Errorf("-plot %q: want a file name ending in .svg or .png", plot))
		}
	}
	return errs
}

// validateGiven appends the problems sim finds with each configuration of
// cfgs. Zero means "default" in sim.Config; on the command line it is a
// value like any other, so the instances, demand and duration are
// validated as given (base holds them), each with its server's quota. A
// problem common to every server is said once.
func validateGiven(cfgs []sim.Config, base sim.Config, errs []error) []error {
	said := map[string]bool{}
	for _, c := range cfgs {
		given := c.Defaults()
		given.Instances, given.Quota, given.Duration = base.Instances, c.Quota, base.Duration
		if base.Demand != 0 { // 0 only for the mixed scenario's own demand
			given.Demand = base.Demand
		}
		for _, err := range splitJoined(given.Validate()) {
			if !said[err.Error()] {
				said[err.Error()] = true
				errs = append(errs, err)
			}
		}
	}
	return errs
}

// splitJoined returns the errors an errors.Join holds, or err alone.
func splitJoined(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// usage is what -h prints.
func usage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, `usage: headroom-sim [flags]

Runs each way of holding a client back (a mode) against a model API with a
hidden quota, on virtual time, and prints one row per mode. Without flags:
2 instances share a quota of 3,000 units a minute; after minute 5 another
client takes half of it for 60 s; seed 42. The same flags always give the
same numbers.

  headroom-sim                          the comparison table
  headroom-sim -seeds 20                median (min-max) over seeds 42 to 61
  headroom-sim -modes cubic,cubic+quota -scenario join
  headroom-sim -plot sim.svg            also draw each mode over time

The API's limiter is the seeds' unless -server, -window, -burst or -publish
say otherwise: a sliding log of 60 s that publishes draft-03 headers from 80%
of the quota. With another server the table adds the share of the
allowance (what an ideal client could have had accepted) and the share of
the requests sent that got a 429:

  headroom-sim -server token-bucket -window 1s -per-second 50 -publish draft-6
  headroom-sim -server leaky-bucket -per-second 50 -burst 20 -delay 10 -costs 1

With a list of servers, windows, bursts or publishes it prints one table of
each (share of the allowance and 429 share), for the modes given:

  headroom-sim -modes cubic+quota -scenario steady -server all -window 1s,10s,60s -per-second 50 -burst 0,20 -publish all

With -goals it prints each of those cells' figure beside the ideal client's (what a
client that knows the server could have had without a 429) and its goal, and how many
cells meet theirs:

  headroom-sim -modes cubic+quota -goals -scenario steady -server all -window 1s,10s,60s -per-second 50 \
    -burst 0,20 -publish all -instances 1 -demand 20000 -duration 5m -costs 1

The model, the columns, the servers and the recommended default: docs/simulator.md

flags:
`)
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
}

// modeFlagNames are the mode names as -modes takes them: "no-limiter",
// "cubic+quota".
func modeFlagNames() []string {
	var s []string
	for _, m := range sim.Modes() {
		s = append(s, strings.ReplaceAll(strings.ReplaceAll(m.Name, " + ", "+"), " ", "-"))
	}
	return s
}

func parseModes(s string, errs []error) ([]sim.Mode, []error) {
	if strings.TrimSpace(strings.ToLower(s)) == "all" {
		return sim.Modes(), errs
	}
	var modes []sim.Mode
	seen := map[string]bool{}
	names := strings.Split(s, ",")
	for _, name := range names {
		name = strings.TrimSpace(name)
		if name == "" {
			if len(names) > 1 {
				errs = append(errs, fmt.Errorf("-modes %q: an empty name between commas", s))
				break
			}
			continue
		}
		m, err := sim.ModeNamed(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !seen[m.Name] {
			seen[m.Name] = true
			modes = append(modes, m)
		}
	}
	if len(modes) == 0 && len(errs) == 0 {
		errs = append(errs, errors.New("-modes: want at least one mode, or all"))
	}
	return modes, errs
}
