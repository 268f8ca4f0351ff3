package main

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

// runSpread runs every mode over o.seeds seeds and prints the median,
// minimum and maximum of each column.
func runSpread(o *options, stdout, stderr io.Writer) int {
	cfg := o.cfg.Defaults()
	shares := !table.SeedsServer(cfg.Server)
	spreads := make([]*sim.SeedSpread, len(o.modes))
	errs := make([]error, len(o.modes))
	inParallel(len(o.modes), func(i int) { spreads[i], errs[i] = sim.RunSeeds(cfg, o.modes[i], o.seeds) })
	if err := errors.Join(errs...); err != nil {
		return failed(stderr, err)
	}
	return writeAs(o.format, stderr,
		func() error { return writeSpreadJSON(stdout, spreads, shares) },
		func() error { return writeSpreadCSV(stdout, spreads, shares) },
		func() error { return writeSpreadTable(stdout, o, spreads, shares) })
}

// spreadStat is one metric's spread in the JSON form.
type spreadStat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// spreadRow is one mode in the JSON form of the spread.
type spreadRow struct {
	Mode        string     `json:"mode"`
	Seeds       int        `json:"seeds"`
	Throughput  spreadStat `json:"throughput_per_min"`
	Share       spreadStat `json:"share"`
	Throttled   spreadStat `json:"throttled"`
	Rejected    spreadStat `json:"rejected"`
	GaveUp      spreadStat `json:"gave_up"`
	P95Wait     spreadStat `json:"p95_wait_s"`
	Recovery    spreadStat `json:"recovery_s"`
	Unrecovered int        `json:"unrecovered"`
	// With a server other than the seeds'.
	AllowanceShare *spreadStat `json:"allowance_share,omitempty"`
	ThrottledShare *spreadStat `json:"throttled_share,omitempty"`
}

func writeSpreadJSON(w io.Writer, spreads []*sim.SeedSpread, shares bool) error {
	st := func(s sim.Spread) spreadStat { return spreadStat{s.Median, s.Min, s.Max} }
	var rows []spreadRow
	for _, s := range spreads {
		r := spreadRow{s.Mode, s.Seeds, st(s.Throughput), st(s.Share), st(s.Throttled), st(s.Rejected),
			st(s.GaveUp), st(s.P95Wait), st(s.Recovery), s.Unrecovered, nil, nil}
		if shares {
			a, t := st(s.AllowanceShare), st(s.ThrottledShare)
			r.AllowanceShare, r.ThrottledShare = &a, &t
		}
		rows = append(rows, r)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeSpreadCSV(w io.Writer, spreads []*sim.SeedSpread, shares bool) error {
	cw := csv.NewWriter(w)
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
	return cw.Error()
}

func writeSpreadTable(w io.Writer, o *options, spreads []*sim.SeedSpread, shares bool) error {
	cfg := o.cfg.Defaults()
	fmt.Fprintf(w, "%s\nSeeds %d to %d: median (min–max) of each column.\n\n",
		table.Title(cfg, false), cfg.Seed, cfg.Seed+uint64(o.seeds)-1)
	rows := [][]string{table.WithShares(shares, []string{"Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery"},
		"Of allowance", "429 share")}
	n := func(s sim.Spread) string {
		return fmt.Sprintf("%s (%s–%s)", table.Thousands(int(math.Round(s.Median))), table.Thousands(int(math.Round(s.Min))), table.Thousands(int(math.Round(s.Max))))
	}
	for _, s := range spreads {
		rec := "-"
		if cfg.Scenario == "drop" {
			rec = fmt.Sprintf("%.0f (%.0f–%.0f) s", s.Recovery.Median, s.Recovery.Min, s.Recovery.Max)
			if s.Unrecovered > 0 {
				rec += fmt.Sprintf(", %d never", s.Unrecovered)
			}
		}
		rows = append(rows, table.WithShares(shares, []string{s.Mode, n(s.Throughput),
			fmt.Sprintf("%.1f%% (%.1f–%.1f)", s.Share.Median*100, s.Share.Min*100, s.Share.Max*100),
			n(s.Throttled), n(s.Rejected), n(s.GaveUp),
			fmt.Sprintf("%.1f (%.1f–%.1f) s", s.P95Wait.Median, s.P95Wait.Min, s.P95Wait.Max), rec},
			fmt.Sprintf("%.1f%% (%.1f–%.1f)", s.AllowanceShare.Median*100, s.AllowanceShare.Min*100, s.AllowanceShare.Max*100),
			fmt.Sprintf("%.2f%% (%.2f–%.2f)", s.ThrottledShare.Median*100, s.ThrottledShare.Min*100, s.ThrottledShare.Max*100)))
	}
	if err := table.WriteRows(w, rows, o.format == "markdown"); err != nil {
		return err
	}
	if err := writePriorities(w, spreadRuns(spreads), o.format == "markdown"); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n"+table.Footer)
	return err
}
