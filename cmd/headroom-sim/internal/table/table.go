// Package table writes the simulator's comparison table: its title, its
// cells and its footer, for the command to print and the interactive page
// to show, so that both say the same digits for the same run.
package table

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/headroom-go/headroom/sim"
)

// Footer is the last line of a table.
const Footer = "Rates in units a minute; model numbers, not a real API. Modes, columns, the recommended default: docs/simulator.md\n"

// Thousands writes n with comma separators, as the seeds' table does.
func Thousands(n int) string {
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

// Human writes whole minutes as "15 min", else seconds.
func Human(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d min", d/time.Minute)
	}
	return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) + " s"
}

// Seconds writes a wait as the table's column does: "47.0 s".
func Seconds(d time.Duration) string { return fmt.Sprintf("%.1f s", d.Seconds()) }

// Title is the first line of a table or a plot: the quota, the server
// unless it is the seeds', the instances and the demand of each (units a
// minute), the run's length, its seed (unless withSeed is false: the spread
// names its seeds on a line of its own) and the scenario. cfg has its
// defaults filled in.
func Title(cfg sim.Config, withSeed bool) string {
	s := fmt.Sprintf("Quota %s", Thousands(cfg.Quota))
	if !SeedsServer(cfg.Server) {
		s += ", " + cfg.Server.String()
	}
	s += fmt.Sprintf(", %d instances of %s, %s", cfg.Instances,
		Thousands(int(math.Round(cfg.Demand))), Human(cfg.Duration))
	if withSeed {
		s += fmt.Sprintf(", seed %d", cfg.Seed)
	}
	return s + ScenarioNote(cfg)
}

// ScenarioNote is ", scenario drop (50% of the quota taken …)".
func ScenarioNote(cfg sim.Config) string {
	s := ", scenario " + cfg.Scenario
	switch cfg.Scenario {
	case "drop":
		s += fmt.Sprintf(" (%.0f%% of the quota taken for %s after %s)", cfg.DropShare*100, Human(cfg.DropFor), Human(cfg.DropAt))
	case "join":
		s += fmt.Sprintf(" (one more instance after %s)", Human(cfg.JoinAt))
	}
	return s
}

// SeedsServer reports whether s (after defaults) is the seeds' server, the
// default one: with another server the tables add the share of the
// allowance and the 429 share.
func SeedsServer(s sim.Server) bool { return s == sim.Config{}.Defaults().Server }

// Header is the comparison table's first row, for a run against server.
func Header(server sim.Server) []string {
	return WithShares(!SeedsServer(server), []string{"Mode", "Throughput", "Share", "429s", "Rejected", "Gave up", "p95 wait", "Recovery"},
		"Of allowance", "429 share")
}

// Row is one mode's row of the comparison table, for a run against server.
func Row(server sim.Server, r *sim.Result) []string {
	rec := "-"
	if r.HasRecovery {
		rec = fmt.Sprintf("%.0f s", r.Recovery.Seconds())
	}
	return WithShares(!SeedsServer(server), []string{r.Mode, Thousands(int(math.Round(r.Throughput))),
		fmt.Sprintf("%.0f%%", r.Share*100), Thousands(r.Throttled), Thousands(r.Rejected),
		Thousands(r.GaveUp), Seconds(r.P95Wait), rec},
		fmt.Sprintf("%.1f%%", r.AllowanceShare*100), fmt.Sprintf("%.2f%%", r.ThrottledShare()*100))
}

// AllowanceNote is the line under a table against a server other than the
// seeds': what the share of the allowance counts against. Empty for the
// seeds' server.
func AllowanceNote(server sim.Server, r *sim.Result) string {
	if SeedsServer(server) {
		return ""
	}
	return fmt.Sprintf("Of allowance: units accepted over the most an ideal client could have had (%s).", Thousands(int(math.Round(r.Allowance))))
}

// WithShares puts the allowance share and the 429 share after the share and
// after the 429s of a table row, when shares is set (a server other than
// the seeds').
func WithShares(shares bool, row []string, allowance, throttled string) []string {
	if !shares {
		return row
	}
	out := append([]string(nil), row[:3]...)
	out = append(out, allowance, row[3], throttled)
	return append(out, row[4:]...)
}

// Write writes the comparison of results as the command prints it: the
// title, the table, the allowance note when there is one, the footer.
func Write(w io.Writer, cfg sim.Config, results []*sim.Result, markdown bool) error {
	fmt.Fprintf(w, "%s\n\n", Title(cfg, true))
	rows := [][]string{Header(cfg.Server)}
	for _, r := range results {
		rows = append(rows, Row(cfg.Server, r))
	}
	if err := WriteRows(w, rows, markdown); err != nil {
		return err
	}
	if note := AllowanceNote(cfg.Server, results[0]); note != "" {
		fmt.Fprintf(w, "\n%s\n", note)
	}
	_, err := io.WriteString(w, "\n"+Footer)
	return err
}

// WriteRows writes rows as a Markdown table (the first row the header, the
// first column left-aligned, the others right-aligned), or as aligned
// columns.
func WriteRows(w io.Writer, rows [][]string, markdown bool) error {
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
