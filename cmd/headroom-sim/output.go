package main

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"math"
	"strconv"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

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
	// With a server other than the seeds': the share of the allowance and
	// of the attempts sent that got a 429.
	AllowanceShare *float64 `json:"allowance_share,omitempty"`
	ThrottledShare *float64 `json:"throttled_share,omitempty"`
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

func toRow(r *sim.Result, shares bool) row {
	w := row{
		Mode: r.Mode, Throughput: round(r.Throughput, 1), Share: round(r.Share, 4),
		Throttled: r.Throttled, Rejected: r.Rejected, GaveUp: r.GaveUp,
		P95Wait: round(r.P95Wait.Seconds(), 3),
	}
	if r.HasRecovery {
		s := r.Recovery.Seconds()
		w.Recovery = &s
	}
	if shares {
		a, t := round(r.AllowanceShare, 4), round(r.ThrottledShare(), 4)
		w.AllowanceShare, w.ThrottledShare = &a, &t
	}
	return w
}

func writeJSON(w io.Writer, cfg sim.Config, results []*sim.Result) error {
	rows := make([]row, 0, len(results))
	for _, r := range results {
		rows = append(rows, toRow(r, !table.SeedsServer(cfg.Server)))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeCSV(w io.Writer, cfg sim.Config, results []*sim.Result) error {
	cw := csv.NewWriter(w)
	shares := !table.SeedsServer(cfg.Server)
	head := []string{"mode", "throughput_per_min", "share", "throttled", "rejected", "gave_up", "p95_wait_s", "recovery_s"}
	if shares {
		head = append(head, "allowance_share", "throttled_share")
	}
	cw.Write(head)
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, r := range results {
		x := toRow(r, shares)
		rec := ""
		if x.Recovery != nil {
			rec = f(*x.Recovery)
		}
		line := []string{x.Mode, f(x.Throughput), f(x.Share), strconv.Itoa(x.Throttled),
			strconv.Itoa(x.Rejected), strconv.Itoa(x.GaveUp), f(x.P95Wait), rec}
		if shares {
			line = append(line, f(*x.AllowanceShare), f(*x.ThrottledShare))
		}
		cw.Write(line)
	}
	cw.Flush()
	return cw.Error()
}
