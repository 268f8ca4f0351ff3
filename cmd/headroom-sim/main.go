// Command headroom-sim runs headroom's limiters against a model API with a
// hidden quota, on virtual time, and prints how each mode did.
//
// Without flags it runs the seeds' scenario: 2 instances share a hidden
// quota of 3,000 units a minute, each with a demand of 2,000 units a minute,
// for 15 minutes; after minute 5 another client takes half of the quota for
// 60 s; seed 42; every mode; the API a sliding log of 60 s that publishes
// draft-03 headers from 80% of the quota. -server, -window, -burst and
// -publish pick another kind of server-side limiter; given lists, the
// command prints a table of every mode against each. See
// docs/simulator.md.
//
//	go run ./cmd/headroom-sim
//	go run ./cmd/headroom-sim -scenario join -instances 2 -format json
//	go run ./cmd/headroom-sim -modes aimd,cubic -plot docs/simulator.svg
//	go run ./cmd/headroom-sim -server token-bucket -window 1s -per-second 50 -publish draft-6
//	go run ./cmd/headroom-sim -modes cubic+quota -scenario steady -server all -window 1s,10s,60s -per-second 50 -burst 0,20 -publish all
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
	if len(o.cfgs) > 1 {
		return runServers(o, stdout, stderr)
	}
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
		err = writeJSON(stdout, o.cfg.Defaults(), results)
	case "csv":
		err = writeCSV(stdout, o.cfg.Defaults(), results)
	default:
		err = writeTable(stdout, o.cfg.Defaults(), results, o.format == "markdown")
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
	shares := !seedsServer(cfg.Server)
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
			// With a server other than the seeds'.
			AllowanceShare *stat `json:"allowance_share,omitempty"`
			ThrottledShare *stat `json:"throttled_share,omitempty"`
		}
		st := func(s sim.Spread) stat { return stat{s.Median, s.Min, s.Max} }
		var rows []srow
		for _, s := range spreads {
			r := srow{s.Mode, s.Seeds, st(s.Throughput), st(s.Share), st(s.Throttled), st(s.Rejected),
				st(s.GaveUp), st(s.P95Wait), st(s.Recovery), s.Unrecovered, nil, nil}
			if shares {
				a, t := st(s.AllowanceShare), st(s.ThrottledShare)
				r.AllowanceShare, r.ThrottledShare = &a, &t
			}
			rows = append(rows, r)
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
				{"gave_up", s.GaveUp}, {"p95_wait_s", s.P95Wait}, {"recovery_s", s.Recovery},
				{"allowance_share", s.AllowanceShare}, {"throttled_share", s.ThrottledShare}} {
				if !shares && (m.name == "allowance_share" || m.name == "throttled_share") {
					continue
				}
				cw.Write([]string{s.Mode, m.name, f(m.v.Median), f(m.v.Min), f(m.v.Max)})
			}
		}
		cw.Flush()
		err = cw.Error()
	default:
		fmt.Fprintf(stdout, "%s\nSeeds %d to %d: median (min–max) of each column.\n\n",
			describe(cfg, false), cfg.Seed, cfg.Seed+uint64(o.seeds)-1)
		rows := [][]string{withShares(shares, []string{"Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery"},
			"Of allowance", "429 share")}
		n := func(s sim.Spread) string {
			return fmt.Sprintf("%s (%s–%s)", thousands(int(math.Round(s.Median))), thousands(int(math.Round(s.Min))), thousands(int(math.Round(s.Max))))
		}
		for _, s := range spreads {
			rec := "-"
			if cfg.Scenario == "drop" {
				rec = fmt.Sprintf("%.0f (%.0f–%.0f) s", s.Recovery.Median, s.Recovery.Min, s.Recovery.Max)
				if s.Unrecovered > 0 {
					rec += fmt.Sprintf(", %d never", s.Unrecovered)
				}
			}
			rows = append(rows, withShares(shares, []string{s.Mode, n(s.Throughput),
				fmt.Sprintf("%.1f%% (%.1f–%.1f)", s.Share.Median*100, s.Share.Min*100, s.Share.Max*100),
				n(s.Throttled), n(s.Rejected), n(s.GaveUp),
				fmt.Sprintf("%.1f (%.1f–%.1f) s", s.P95Wait.Median, s.P95Wait.Min, s.P95Wait.Max), rec},
				fmt.Sprintf("%.1f%% (%.1f–%.1f)", s.AllowanceShare.Median*100, s.AllowanceShare.Min*100, s.AllowanceShare.Max*100),
				fmt.Sprintf("%.2f%% (%.2f–%.2f)", s.ThrottledShare.Median*100, s.ThrottledShare.Min*100, s.ThrottledShare.Max*100)))
		}
		if err = writeRows(stdout, rows, o.format == "markdown"); err == nil {
			_, err = io.WriteString(stdout, "\n"+footer)
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "headroom-sim: %v\n", err)
		return 1
	}
	return 0
}
