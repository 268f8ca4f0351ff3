package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

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
		rows = append(rows, toRow(r, !seedsServer(cfg.Server)))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeCSV(w io.Writer, cfg sim.Config, results []*sim.Result) error {
	cw := csv.NewWriter(w)
	shares := !seedsServer(cfg.Server)
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
	s := fmt.Sprintf("Quota %s", thousands(cfg.Quota))
	if !seedsServer(cfg.Server) {
		s += ", " + cfg.Server.String()
	}
	s += fmt.Sprintf(", %d instances of %s, %s", cfg.Instances,
		thousands(int(math.Round(cfg.Demand))), human(cfg.Duration))
	if withSeed {
		s += fmt.Sprintf(", seed %d", cfg.Seed)
	}
	return s + scenarioNote(cfg)
}

// scenarioNote is ", scenario drop (50% of the quota taken …)".
func scenarioNote(cfg sim.Config) string {
	s := ", scenario " + cfg.Scenario
	switch cfg.Scenario {
	case "drop":
		s += fmt.Sprintf(" (%.0f%% of the quota taken for %s after %s)", cfg.DropShare*100, human(cfg.DropFor), human(cfg.DropAt))
	case "join":
		s += fmt.Sprintf(" (one more instance after %s)", human(cfg.JoinAt))
	}
	return s
}

// seedsServer reports whether s (after Defaults) is the seeds' server, the
// default one: with another server the tables add the share of the
// allowance and the 429 share.
func seedsServer(s sim.Server) bool { return s == sim.Config{}.Defaults().Server }

// footer is the last line of a table.
const footer = "Rates in units a minute; model numbers, not a real API. Modes, columns, the recommended default: docs/simulator.md\n"

// human writes whole minutes as "15 min", else seconds.
func human(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

func writeTable(w io.Writer, cfg sim.Config, results []*sim.Result, markdown bool) error {
	fmt.Fprintf(w, "%s\n\n", describe(cfg, true))
	shares := !seedsServer(cfg.Server)
	rows := [][]string{withShares(shares, []string{"Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery"},
		"Of allowance", "429 share")}
	for _, r := range results {
		rec := "-"
		if r.HasRecovery {
			rec = fmt.Sprintf("%.0f s", r.Recovery.Seconds())
		}
		rows = append(rows, withShares(shares, []string{r.Mode, thousands(int(math.Round(r.Throughput))),
			fmt.Sprintf("%.0f%%", r.Share*100), thousands(r.Throttled), thousands(r.Rejected),
			thousands(r.GaveUp), fmt.Sprintf("%.1f s", r.P95Wait.Seconds()), rec},
			fmt.Sprintf("%.1f%%", r.AllowanceShare*100), fmt.Sprintf("%.2f%%", r.ThrottledShare()*100)))
	}
	if err := writeRows(w, rows, markdown); err != nil {
		return err
	}
	if shares {
		fmt.Fprintf(w, "\nOf allowance: units accepted over the most an ideal client could have had (%s).\n", thousands(int(math.Round(results[0].Allowance))))
	}
	_, err := io.WriteString(w, "\n"+footer)
	return err
}

// withShares puts the allowance share and the 429 share after the share and
// after the 429s of a table row, when shares is set (a server other than
// the seeds').
func withShares(shares bool, row []string, allowance, throttled string) []string {
	if !shares {
		return row
	}
	out := append([]string(nil), row[:3]...)
	out = append(out, allowance, row[3], throttled)
	return append(out, row[4:]...)
}

// writeRows writes rows as a Markdown table (the first row the header, the
// first column left-aligned, the others right-aligned), or as aligned
// columns.
func writeRows(w io.Writer, rows [][]string, markdown bool) error {
	if !markdown {
		return alignRows(w, rows)
	}
	var b strings.Builder
	for i, row := range rows {
		b.WriteString("|")
		for _, c := range row {
			b.WriteString(" " + strings.ReplaceAll(c, "|", "\\|") + " |")
		}
		b.WriteByte('\n')
		if i == 0 {
			b.WriteString("|---|")
			b.WriteString(strings.Repeat("---:|", len(row)-1))
			b.WriteByte('\n')
		}
	}
	_, err := io.WriteString(w, b.String())
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
