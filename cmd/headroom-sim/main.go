// Command headroom-sim runs headroom's limiters against a model API with a
// hidden quota, on virtual time, and prints how each mode did.
//
// Without flags it runs the seeds' scenario: 2 instances share a hidden
// quota of 3,000 units a minute, each with a demand of 2,000 units a minute,
// for 15 minutes; after minute 5 another client takes half of the quota for
// 60 s; seed 42; every mode. See docs/simulator.md.
//
//	go run ./cmd/headroom-sim
//	go run ./cmd/headroom-sim -scenario join -instances 2 -format json
//	go run ./cmd/headroom-sim -modes aimd,cubic -plot docs/simulator.svg
//
// Bad flags print an error and exit with status 2.
package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/headroom-go/headroom/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// options are the parsed flags.
type options struct {
	cfg    sim.Config
	modes  []sim.Mode
	format string
	plot   string
	seeds  int
}

// parse reads the flags. It writes nothing: -h returns flag.ErrHelp, and
// run prints the usage to stdout; an error is printed once, by run.
func parse(args []string) (*options, *flag.FlagSet, error) {
	fs := flag.NewFlagSet("headroom-sim", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		instances = fs.Int("instances", 2, "instances (processes) that share the quota at the start")
		quota     = fs.Int("quota", 3000, "the API's hidden quota, units in any 60 s")
		demand    = fs.Float64("demand", 2000, "demand of each instance, units a minute (Poisson)")
		duration  = fs.Duration("duration", 15*time.Minute, "virtual time to simulate")
		seed      = fs.Uint64("seed", 42, "random seed (1 or more): the same seed gives the same numbers")
		scenario  = fs.String("scenario", "drop", "steady | drop (another client takes half of the quota for 60 s after minute 5) | join (one more instance joins after minute 5)")
		modes     = fs.String("modes", "all", "comma-separated modes, or all: "+strings.Join(modeFlagNames(), ","))
		format    = fs.String("format", "table", "table | csv | json")
		plot      = fs.String("plot", "", "also draw rate, quota and 429s over time for each mode to FILE.svg or FILE.png")
		seeds     = fs.Int("seeds", 1, "run this many seeds from -seed on and print the median, minimum and maximum of each column")
	)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, fs, err
		}
		return nil, fs, err
	}
	if fs.NArg() > 0 {
		return nil, fs, fmt.Errorf("unexpected argument %q: every setting is a flag", fs.Arg(0))
	}
	var errs []error
	if *seed == 0 {
		errs = append(errs, errors.New("-seed 0: want 1 or more"))
	}
	o := &options{format: *format, plot: *plot, seeds: *seeds}
	if *seeds < 1 || *seeds > 1000 {
		errs = append(errs, fmt.Errorf("-seeds %d: want 1 to 1000", *seeds))
	}
	if *seeds > 1 && *plot != "" {
		errs = append(errs, errors.New("-plot draws one seed: leave out -seeds"))
	}
	switch *format {
	case "table", "csv", "json":
	default:
		errs = append(errs, fmt.Errorf("-format %q: want table, csv or json", *format))
	}
	if p := *plot; p != "" {
		switch strings.ToLower(filepath.Ext(p)) {
		case ".svg", ".png":
		default:
			errs = append(errs, fmt.Errorf("-plot %q: want a file name ending in .svg or .png", p))
		}
	}
	o.cfg = sim.Config{
		Seed: *seed, Instances: *instances, Quota: *quota, Demand: *demand,
		Duration: *duration, Scenario: sim.Scenario(strings.ToLower(*scenario)),
	}
	// Zero means "default" in sim.Config; on the command line it is an error.
	if *instances == 0 || *quota == 0 || *demand == 0 || *duration == 0 {
		errs = append(errs, errors.New("-instances, -quota, -demand and -duration must be above 0"))
	}
	if err := o.cfg.Defaults().Validate(); err != nil {
		errs = append(errs, err)
	}
	o.modes, errs = parseModes(*modes, errs)
	if err := errors.Join(errs...); err != nil {
		return nil, fs, err
	}
	return o, fs, nil
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

The model, the columns and the recommended default: docs/simulator.md

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
	for _, n := range sim.ModeNames() {
		s = append(s, strings.ReplaceAll(strings.ReplaceAll(n, " + ", "+"), " ", "-"))
	}
	return s
}

func parseModes(s string, errs []error) ([]sim.Mode, []error) {
	if strings.TrimSpace(strings.ToLower(s)) == "all" {
		return sim.DefaultModes(), errs
	}
	var modes []sim.Mode
	seen := map[string]bool{}
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
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

// run is the command: it returns the exit status, 2 for bad flags.
func run(args []string, stdout, stderr io.Writer) int {
	o, fs, err := parse(args)
	if errors.Is(err, flag.ErrHelp) {
		usage(stdout, fs)
		return 0
	}
	if err != nil {
		fmt.Fprintf(stderr, "headroom-sim: %v\n(run headroom-sim -h for the flags)\n", err)
		return 2
	}
	cfg := o.cfg
	cfg.NoSeries = o.plot == ""
	if o.seeds > 1 {
		return runSpread(o, stdout, stderr)
	}
	results, err := runAll(cfg, o.modes)
	if err != nil {
		fmt.Fprintf(stderr, "headroom-sim: %v\n", err)
		return 1
	}
	switch o.format {
	case "json":
		err = writeJSON(stdout, results)
	case "csv":
		err = writeCSV(stdout, results)
	default:
		err = writeTable(stdout, o.cfg.Defaults(), results)
	}
	if err == nil && o.plot != "" {
		err = writePlot(o.plot, o.cfg.Defaults(), results)
	}
	if err != nil {
		fmt.Fprintf(stderr, "headroom-sim: %v\n", err)
		return 1
	}
	return 0
}

// runAll runs the modes side by side, one per CPU: each run is
// single-threaded and deterministic, so the results do not depend on the
// order in which they finish.
func runAll(cfg sim.Config, modes []sim.Mode) ([]*sim.Result, error) {
	results := make([]*sim.Result, len(modes))
	errs := make([]error, len(modes))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(modes)) {
		wg.Go(func() {
			for i := range next {
				results[i], errs[i] = sim.Run(cfg, modes[i])
			}
		})
	}
	for i := range modes {
		next <- i
	}
	close(next)
	wg.Wait()
	return results, errors.Join(errs...)
}

// row is one line of the JSON output.
type row struct {
	Mode       string   `json:"mode"`
	Throughput float64  `json:"throughput_per_min"`
	Share      float64  `json:"share"`
	Throttled  int      `json:"throttled"`
	Rejected   int      `json:"rejected"`
	GaveUp     int      `json:"gave_up"`
	P95Wait    float64  `json:"p95_wait_s"`
	Recovery   *float64 `json:"recovery_s"` // null without a drop, or when it never recovered
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

func toRow(r *sim.Result) row {
	w := row{
		Mode: r.Mode, Throughput: round(r.Throughput, 1), Share: round(r.Share, 4),
		Throttled: r.Throttled, Rejected: r.Rejected, GaveUp: r.GaveUp,
		P95Wait: round(r.P95Wait.Seconds(), 3),
	}
	if r.HasRecovery {
		s := r.Recovery.Seconds()
		w.Recovery = &s
	}
	return w
}

func writeJSON(w io.Writer, results []*sim.Result) error {
	rows := make([]row, 0, len(results))
	for _, r := range results {
		rows = append(rows, toRow(r))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeCSV(w io.Writer, results []*sim.Result) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"mode", "throughput_per_min", "share", "throttled", "rejected", "gave_up", "p95_wait_s", "recovery_s"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, r := range results {
		x := toRow(r)
		rec := ""
		if x.Recovery != nil {
			rec = f(*x.Recovery)
		}
		cw.Write([]string{x.Mode, f(x.Throughput), f(x.Share), strconv.Itoa(x.Throttled),
			strconv.Itoa(x.Rejected), strconv.Itoa(x.GaveUp), f(x.P95Wait), rec})
	}
	cw.Flush()
	return cw.Error()
}

// thousands writes n with comma separators, as the seeds' table does.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// describe is the title of a table or a plot: the quota, the instances and
// the demand of each (units a minute), the run's length, its seed (unless
// withSeed is false: the spread names its seeds on a line of its own) and
// the scenario.
func describe(cfg sim.Config, withSeed bool) string {
	s := fmt.Sprintf("Quota %s, %d instances of %s, %s", thousands(cfg.Quota), cfg.Instances,
		thousands(int(math.Round(cfg.Demand))), human(cfg.Duration))
	if withSeed {
		s += fmt.Sprintf(", seed %d", cfg.Seed)
	}
	s += ", scenario " + string(cfg.Scenario)
	switch cfg.Scenario {
	case sim.Drop:
		s += fmt.Sprintf(" (%.0f%% of the quota taken for %s after %s)", cfg.DropShare*100, human(cfg.DropFor), human(cfg.DropAt))
	case sim.Join:
		s += fmt.Sprintf(" (one more instance after %s)", human(cfg.JoinAt))
	}
	return s
}

// footer is the last line of a table.
const footer = "Rates in units a minute; model numbers, not a real API. Modes, columns, the recommended default: docs/simulator.md\n"

// human writes whole minutes as "15 min", else seconds.
func human(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// runSpread runs every mode over o.seeds seeds and prints the median,
// minimum and maximum of each column.
func runSpread(o *options, stdout, stderr io.Writer) int {
	cfg := o.cfg.Defaults()
	spreads := make([]*sim.SeedSpread, len(o.modes))
	errs := make([]error, len(o.modes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, m := range o.modes {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			spreads[i], errs[i] = sim.RunSeeds(cfg, m, o.seeds)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		fmt.Fprintf(stderr, "headroom-sim: %v\n", err)
		return 1
	}
	var err error
	switch o.format {
	case "json":
		type stat struct{ Median, Min, Max float64 }
		type srow struct {
			Mode        string `json:"mode"`
			Seeds       int    `json:"seeds"`
			Throughput  stat   `json:"throughput_per_min"`
			Share       stat   `json:"share"`
			Throttled   stat   `json:"throttled"`
			Rejected    stat   `json:"rejected"`
			GaveUp      stat   `json:"gave_up"`
			P95Wait     stat   `json:"p95_wait_s"`
			Recovery    stat   `json:"recovery_s"`
			Unrecovered int    `json:"unrecovered"`
		}
		st := func(s sim.Spread) stat { return stat{s.Median, s.Min, s.Max} }
		var rows []srow
		for _, s := range spreads {
			rows = append(rows, srow{s.Mode, s.Seeds, st(s.Throughput), st(s.Share), st(s.Throttled), st(s.Rejected),
				st(s.GaveUp), st(s.P95Wait), st(s.Recovery), s.Unrecovered})
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(rows)
	case "csv":
		cw := csv.NewWriter(stdout)
		cw.Write([]string{"mode", "metric", "median", "min", "max"})
		f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
		for _, s := range spreads {
			for _, m := range []struct {
				name string
				v    sim.Spread
			}{{"throughput_per_min", s.Throughput}, {"share", s.Share}, {"throttled", s.Throttled}, {"rejected", s.Rejected},
				{"gave_up", s.GaveUp}, {"p95_wait_s", s.P95Wait}, {"recovery_s", s.Recovery}} {
				cw.Write([]string{s.Mode, m.name, f(m.v.Median), f(m.v.Min), f(m.v.Max)})
			}
		}
		cw.Flush()
		err = cw.Error()
	default:
		fmt.Fprintf(stdout, "%s\nSeeds %d to %d: median (min–max) of each column.\n\n",
			describe(cfg, false), cfg.Seed, cfg.Seed+uint64(o.seeds)-1)
		rows := [][]string{{"Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery"}}
		n := func(s sim.Spread) string {
			return fmt.Sprintf("%s (%s–%s)", thousands(int(math.Round(s.Median))), thousands(int(math.Round(s.Min))), thousands(int(math.Round(s.Max))))
		}
		for _, s := range spreads {
			rec := "-"
			if cfg.Scenario == sim.Drop {
				rec = fmt.Sprintf("%.0f (%.0f–%.0f) s", s.Recovery.Median, s.Recovery.Min, s.Recovery.Max)
				if s.Unrecovered > 0 {
					rec += fmt.Sprintf(", %d never", s.Unrecovered)
				}
			}
			rows = append(rows, []string{s.Mode, n(s.Throughput),
				fmt.Sprintf("%.1f%% (%.1f–%.1f)", s.Share.Median*100, s.Share.Min*100, s.Share.Max*100),
				n(s.Throttled), n(s.Rejected), n(s.GaveUp),
				fmt.Sprintf("%.1f (%.1f–%.1f) s", s.P95Wait.Median, s.P95Wait.Min, s.P95Wait.Max), rec})
		}
		if err = alignRows(stdout, rows); err == nil {
			_, err = io.WriteString(stdout, "\n"+footer)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "headroom-sim: %v\n", err)
		return 1
	}
	return 0
}

func writeTable(w io.Writer, cfg sim.Config, results []*sim.Result) error {
	fmt.Fprintf(w, "%s\n\n", describe(cfg, true))
	rows := [][]string{{"Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery"}}
	for _, r := range results {
		rec := "-"
		if r.HasRecovery {
			rec = fmt.Sprintf("%.0f s", r.Recovery.Seconds())
		}
		rows = append(rows, []string{r.Mode, thousands(int(math.Round(r.Throughput))),
			fmt.Sprintf("%.0f%%", r.Share*100), thousands(r.Throttled), thousands(r.Rejected),
			thousands(r.GaveUp), fmt.Sprintf("%.1f s", r.P95Wait.Seconds()), rec})
	}
	if err := alignRows(w, rows); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n"+footer)
	return err
}

// alignRows writes rows as columns: the first left-aligned, the others
// right-aligned, two spaces apart.
func alignRows(w io.Writer, rows [][]string) error {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	for _, row := range rows {
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-utf8.RuneCountInString(c))
			switch i {
			case 0:
				b.WriteString(c + pad)
			default:
				b.WriteString("  " + pad + c)
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}
