package main

import (
	"errors"
	"fmt"
	"slices"

	"github.com/headroom-go/headroom/sim"
)

// The goals of a cell of the table of servers, docs/simulator.md's "Goals":
// where the server publishes anything (a Retry-After alone counts), at
// least 95% of the allowance with at most 1% of the requests sent
// throttled; where it publishes nothing, 90% and 5%. Where the ideal client
// itself falls short of that, 97% of its share of the allowance with at
// most 1 point more of its requests throttled than it.
const (
	publishedMinShare     = 0.95
	publishedMaxThrottled = 0.01
	silentMinShare        = 0.90
	silentMaxThrottled    = 0.05
	idealShareFraction    = 0.97
	idealThrottledMargin  = 0.01
)

// figure is what a mode had in a cell: its share of the allowance and the
// share of its requests sent that got a 429 (medians over the seeds).
type figure struct {
	Share, Throttled float64
}

// goal is what a cell asks of a mode.
type goal struct {
	MinShare, MaxThrottled float64
	// FromIdeal says the ideal client falls short of the cell's ordinary
	// goal, which is then taken from the ideal's figure.
	FromIdeal bool
}

// cellGoal is the goal of a cell whose server publishes publish, in which
// the ideal client had ideal.
func cellGoal(publish string, ideal figure) goal {
	g := goal{MinShare: publishedMinShare, MaxThrottled: publishedMaxThrottled}
	if publish == "none" {
		g = goal{MinShare: silentMinShare, MaxThrottled: silentMaxThrottled}
	}
	if ideal.Share < g.MinShare || ideal.Throttled > g.MaxThrottled {
		g = goal{MinShare: idealShareFraction * ideal.Share, MaxThrottled: ideal.Throttled + idealThrottledMargin, FromIdeal: true}
	}
	return g
}

func (g goal) met(f figure) bool { return f.Share >= g.MinShare && f.Throttled <= g.MaxThrottled }

// goalCell is one mode against one server, with the ideal client's figure
// beside it.
type goalCell struct {
	Mode       string
	Config     sim.Config
	Got, Ideal figure
	Goal       goal
	Met        bool
}

// gridGoals runs every mode and the ideal client against every server of
// cfgs, with seeds seeds each from each configuration's own, side by side,
// and gives each cell its goal; the cells go mode by mode, each in the
// order of cfgs.
func gridGoals(modes []sim.Mode, cfgs []sim.Config, seeds int) ([]goalCell, error) {
	ideal, err := sim.ModeNamed("ideal")
	if err != nil {
		return nil, err
	}
	all := append(slices.Clone(modes), ideal)
	figures := make([][]figure, len(all))
	for m := range all {
		figures[m] = make([]figure, len(cfgs))
	}
	type job struct{ mode, cfg int }
	var jobs []job
	for m := range all {
		if m < len(modes) && modes[m].Name == ideal.Name {
			continue // the ideal is run once, as the yardstick
		}
		for c := range cfgs {
			jobs = append(jobs, job{m, c})
		}
	}
	errs := make([]error, len(jobs))
	inParallel(len(jobs), func(i int) {
		j := jobs[i]
		figures[j.mode][j.cfg], errs[i] = medianFigure(cfgs[j.cfg], all[j.mode], seeds)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	idealFigures := figures[len(modes)]
	var cells []goalCell
	for m, mode := range modes {
		got := figures[m]
		if mode.Name == ideal.Name {
			got = idealFigures
		}
		for c, cfg := range cfgs {
			g := cellGoal(cfg.Defaults().Server.Publish, idealFigures[c])
			cells = append(cells, goalCell{Mode: mode.Name, Config: cfg, Got: got[c], Ideal: idealFigures[c], Goal: g, Met: g.met(got[c])})
		}
	}
	return cells, nil
}

// medianFigure runs mode against cfg with seeds seeds from cfg's and gives
// the medians of its figures.
func medianFigure(cfg sim.Config, mode sim.Mode, seeds int) (figure, error) {
	cfg.NoSeries = true
	var share, thr []float64
	base := cfg.Defaults().Seed
	for i := range seeds {
		c := cfg
		c.Seed = base + uint64(i)
		r, err := sim.Run(c, mode)
		if err != nil {
			return figure{}, err
		}
		share = append(share, r.AllowanceShare)
		thr = append(thr, r.ThrottledShare())
	}
	return figure{Share: median(share), Throttled: median(thr)}, nil
}

// metCount is how many of the cells of mode meet their goal, of how many.
func metCount(cells []goalCell, mode string) (met, of int) {
	for _, c := range cells {
		if c.Mode == mode {
			of++
			if c.Met {
				met++
			}
		}
	}
	return met, of
}

// goalSummary is the last line: "41 of 126 cells meet their goal."
func goalSummary(cells []goalCell, modes []sim.Mode) string {
	if len(modes) == 1 {
		met, of := metCount(cells, modes[0].Name)
		return fmt.Sprintf("%d of %d cells meet their goal.\n", met, of)
	}
	s := ""
	for _, m := range modes {
		met, of := metCount(cells, m.Name)
		s += fmt.Sprintf("%s: %d of %d cells meet their goal.\n", m.Name, met, of)
	}
	return s
}
