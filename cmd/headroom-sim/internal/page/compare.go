package page

import (
	"fmt"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

// Comparison is the head of the comparison table for a world: its title,
// its header, its footer, the modes it runs in order, and the command that
// prints the same table.
type Comparison struct {
	Title   string   `json:"title"`
	Header  []string `json:"header"`
	Footer  string   `json:"footer"`
	Modes   []string `json:"modes"`
	Flags   []string `json:"flags"`
	Command string   `json:"command"`
}

// CompareRow is one mode's row of the comparison, with a small chart: the
// sum of the rates, the units accepted over the last 60 s and the quota a
// minute, one point every Step seconds.
type CompareRow struct {
	Row      []string  `json:"row"`
	Note     string    `json:"note,omitempty"` // the allowance, against another server than the seeds'
	Step     float64   `json:"step"`
	Rate     []float64 `json:"rate"`
	Accepted []int     `json:"accepted"`
	Quota    []float64 `json:"quota"`
}

// chartPoints is about how many points a small chart has.
const chartPoints = 180

// Compare is the head of the comparison of modes (all when empty, by
// sim.Mode name) in world w.
func Compare(w World, modes []string) (Comparison, error) {
	cfg, err := w.Config()
	if err != nil {
		return Comparison{}, err
	}
	if len(modes) == 0 {
		for _, m := range sim.Modes() {
			modes = append(modes, m.Name)
		}
	}
	for _, m := range modes {
		if _, err := sim.ModeNamed(m); err != nil {
			return Comparison{}, err
		}
	}
	flags := w.Flags(modes, nil)
	if len(modes) == len(sim.Modes()) {
		flags = flags[:len(flags)-2] // every mode is the command's default
	}
	return Comparison{Title: table.Title(cfg, true), Header: table.Header(cfg.Server), Footer: table.Footer,
		Modes: modes, Flags: flags, Command: CommandLine(flags)}, nil
}

// CompareMode runs one mode (a sim.Mode name) in world w and gives its row
// of the table.
func CompareMode(w World, mode string) (CompareRow, error) {
	cfg, err := w.Config()
	if err != nil {
		return CompareRow{}, err
	}
	m, err := sim.ModeNamed(mode)
	if err != nil {
		return CompareRow{}, err
	}
	res, err := sim.Run(cfg, m)
	if err != nil {
		return CompareRow{}, fmt.Errorf("%s: %w", mode, err)
	}
	row := CompareRow{Row: table.Row(cfg.Server, res), Note: table.AllowanceNote(cfg.Server, res)}
	step := max(len(res.Series)/chartPoints, 1)
	row.Step = float64(step)
	perMinute := float64(60) / cfg.Server.Window.Seconds()
	accepted := 0
	for i, s := range res.Series {
		accepted += s.Accepted
		if i >= 60 {
			accepted -= res.Series[i-60].Accepted
		}
		if i%step == 0 {
			row.Rate = append(row.Rate, s.Rate)
			row.Accepted = append(row.Accepted, accepted)
			row.Quota = append(row.Quota, float64(s.Quota)*perMinute)
		}
	}
	return row, nil
}
