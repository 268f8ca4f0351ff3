package main

import (
	"fmt"
	"io"
	"slices"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

// writePriorities writes, for the mixed scenario, what each priority level
// of each mode met: one row a mode and level, each column the median
// (min–max) over the runs when there are several. It writes nothing for
// results without priorities.
func writePriorities(w io.Writer, runs [][]*sim.Result, markdown bool) error {
	rows := [][]string{{"Mode", "Priority", "Requests", "Rejected", "Gave up", "p95 wait"}}
	for _, rs := range runs {
		if len(rs) == 0 || len(rs[0].ByPriority) == 0 {
			continue
		}
		for level, p := range rs[0].ByPriority {
			col := func(of func(sim.PriorityResult) float64, format func(float64) string) string {
				var v []float64
				for _, r := range rs {
					v = append(v, of(r.ByPriority[level]))
				}
				slices.Sort(v)
				med := v[len(v)/2]
				if len(v)%2 == 0 {
					med = (v[len(v)/2-1] + v[len(v)/2]) / 2
				}
				if len(v) == 1 {
					return format(med)
				}
				return fmt.Sprintf("%s (%s–%s)", format(med), format(v[0]), format(v[len(v)-1]))
			}
			count := func(x float64) string { return table.Thousands(int(x + 0.5)) }
			rows = append(rows, []string{rs[0].Mode, p.Priority,
				col(func(l sim.PriorityResult) float64 { return float64(l.Requests) }, count),
				col(func(l sim.PriorityResult) float64 { return float64(l.Rejected) }, count),
				col(func(l sim.PriorityResult) float64 { return float64(l.GaveUp) }, count),
				col(func(l sim.PriorityResult) float64 { return l.P95Wait.Seconds() },
					func(x float64) string { return fmt.Sprintf("%.1f s", x) }),
			})
		}
	}
	if len(rows) == 1 {
		return nil
	}
	if _, err := io.WriteString(w, "\nBy priority:\n\n"); err != nil {
		return err
	}
	return table.WriteRows(w, rows, markdown)
}

// oneRun is each result as the only run of its mode.
func oneRun(results []*sim.Result) [][]*sim.Result {
	runs := make([][]*sim.Result, len(results))
	for i, r := range results {
		runs[i] = []*sim.Result{r}
	}
	return runs
}

// spreadRuns is every seed's result of each spread.
func spreadRuns(spreads []*sim.SeedSpread) [][]*sim.Result {
	runs := make([][]*sim.Result, len(spreads))
	for i, s := range spreads {
		runs[i] = s.Runs
	}
	return runs
}
