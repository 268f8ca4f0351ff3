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
//	go run ./cmd/headroom-sim -modes aimd -set IncreaseStep=600
//
// -serve builds the interactive page (docs/site, with the simulator
// compiled to WebAssembly) and serves it; -build-site builds it into a
// folder for any static host:
//
//	go run ./cmd/headroom-sim -serve 127.0.0.1:8080
//	go run ./cmd/headroom-sim -build-site /tmp/site
//
// Bad flags print an error and exit with status 2.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
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
	switch {
	case o.serve != "":
		return serveSite(o.serve, stdout, stderr)
	case o.buildSite != "":
		return buildSiteTo(o.buildSite, stdout, stderr)
	}
	cfg := o.cfg
	cfg.NoSeries = o.plot == ""
	if o.goals {
		return runGoals(o, stdout, stderr)
	}
	if len(o.cfgs) > 1 {
		return runServers(o, stdout, stderr)
	}
	if o.seeds > 1 {
		return runSpread(o, stdout, stderr)
	}
	results := make([]*sim.Result, len(o.modes))
	errs := make([]error, len(o.modes))
	inParallel(len(o.modes), func(i int) { results[i], errs[i] = sim.Run(cfg, o.modes[i]) })
	if err := errors.Join(errs...); err != nil {
		return failed(stderr, err)
	}
	given := o.cfg.Defaults()
	status := writeAs(o.format, stderr,
		func() error { return writeJSON(stdout, given, results) },
		func() error { return writeCSV(stdout, given, results) },
		func() error {
			if err := table.Write(stdout, given, results, o.format == "markdown"); err != nil {
				return err
			}
			return writePriorities(stdout, oneRun(results), o.format == "markdown")
		})
	if status == 0 && o.plot != "" {
		if err := writePlot(o.plot, given, results); err != nil {
			return failed(stderr, err)
		}
	}
	return status
}

// inParallel calls do(i) for every i below n, one goroutine a CPU. Each
// run is single-threaded and deterministic, so the results do not depend
// on the order in which they finish.
func inParallel(n int, do func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), n) {
		wg.Go(func() {
			for i := range next {
				do(i)
			}
		})
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

// writeAs writes the output in format (json, csv, or a table otherwise)
// and returns the exit status.
func writeAs(format string, stderr io.Writer, asJSON, asCSV, asTable func() error) int {
	var err error
	switch format {
	case "json":
		err = asJSON()
	case "csv":
		err = asCSV()
	default:
		err = asTable()
	}
	if err != nil {
		return failed(stderr, err)
	}
	return 0
}

// failed prints err and returns the exit status of a run that failed.
func failed(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "headroom-sim: %v\n", err)
	return 1
}
