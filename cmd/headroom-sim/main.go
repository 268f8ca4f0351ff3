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
	"runtime"
	"strconv"
	"sync"

	"github.com/headroom-go/headroom/sim"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
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
		type stat struct {
			Median float64 `json:"median"`
			Min    float64 `json:"min"`
			Max    float64 `json:"max"`
		}
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
