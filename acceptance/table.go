package acceptance

import (
	"fmt"
	"strings"
	"time"
)

// The console table the command prints as cells finish: one line a cell,
// headroom's figures then go-retryablehttp's, then the goal, and under it
// each miss.

const tableRow = "%-62s %7s %6s %6s %8s %7s %5s │ %7s %6s %6s %8s %7s │ %s"

// TableHeader is the table's two header lines.
func TableHeader() string {
	return fmt.Sprintf("%-62s %-45s│ %-39s│", "", "headroom", "retryablehttp") + "\n" +
		fmt.Sprintf(tableRow, "cell", "units", "share", "thr", "p95", "failed", "self", "units", "share", "thr", "p95", "failed", "goal")
}

// TableRow is res as a line of the table, and its misses as indented
// lines under it.
func TableRow(res CellResult) string {
	if res.Skipped != "" {
		return fmt.Sprintf("%-62s skipped: %s", res.Cell.Name, res.Skipped)
	}
	s, p := res.Subject, res.Peer
	goal := "met"
	if len(res.Misses) > 0 {
		goal = fmt.Sprintf("missed %d", len(res.Misses))
	}
	line := fmt.Sprintf(tableRow, res.Cell.Name,
		fmt.Sprint(s.Units), percent(s.Share()), percent(s.ThrottledShare()), shortLatency(s.P95), fmt.Sprint(s.Failed), fmt.Sprint(s.SelfImposed),
		fmt.Sprint(p.Units), percent(p.Share()), percent(p.ThrottledShare()), shortLatency(p.P95), fmt.Sprint(p.Failed),
		goal)
	var b strings.Builder
	b.WriteString(line)
	for _, m := range res.Misses {
		b.WriteString("\n    ✗ " + m)
	}
	return b.String()
}

// percent is a share as "95.2%".
func percent(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// shortLatency is a call time to three significant figures at most: "812µs",
// "1.2ms", "3.05s".
func shortLatency(d time.Duration) string {
	switch {
	case d <= 0:
		return "–"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 999500*time.Microsecond:
		return trimZeros(fmt.Sprintf("%.3g", float64(d)/float64(time.Millisecond))) + "ms"
	}
	return trimZeros(fmt.Sprintf("%.3g", d.Seconds())) + "s"
}

func trimZeros(s string) string {
	if strings.Contains(s, ".") && !strings.Contains(s, "e") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
