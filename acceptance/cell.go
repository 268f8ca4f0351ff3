package acceptance

import (
	"fmt"
	"time"
)

// Cell is one row of the matrix: one server, so many callers calling it
// for Duration at costs drawn from Costs, each caller with its own random
// stream seeded from Seed and its index (so a caller's costs are the same
// on every run, whatever the interleaving).
type Cell struct {
	// Name identifies the cell; the command's -cells flag matches it.
	Name     string
	Server   ServerSpec
	Callers  int
	Duration time.Duration
	Costs    CostMix
	Seed     uint64
	// Goals are the cell's own goals; nil means DefaultGoals for what the
	// server publishes.
	Goals *Goals
}

// Validate reports every reason c cannot run, or nil.
func (c Cell) Validate() error {
	var problems []string
	if c.Name == "" {
		problems = append(problems, "no name")
	}
	if c.Server.Start == nil {
		problems = append(problems, "server "+quoteOrNone(c.Server.Name)+" has no Start")
	}
	if c.Server.Allowance == nil {
		problems = append(problems, "server "+quoteOrNone(c.Server.Name)+" has no Allowance")
	}
	if c.Callers < 1 {
		problems = append(problems, fmt.Sprintf("callers is %d, want 1 or more", c.Callers))
	}
	if c.Duration <= 0 {
		problems = append(problems, fmt.Sprintf("duration is %s, want more than 0", c.Duration))
	}
	if err := c.Costs.Validate(); err != nil {
		problems = append(problems, err.Error())
	} else if !c.Server.Costs && c.Costs.Max() > 1 {
		problems = append(problems, fmt.Sprintf("costs %s, but the server counts requests, not units: want cost 1", c.Costs))
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("cell %s: %s", quoteOrNone(c.Name), joinProblems(problems))
}

// goals are the goals c is held to.
func (c Cell) goals() Goals {
	if c.Goals != nil {
		return *c.Goals
	}
	return DefaultGoals(c.Server.Headers)
}

func quoteOrNone(s string) string {
	if s == "" {
		return "(unnamed)"
	}
	return fmt.Sprintf("%q", s)
}

func joinProblems(ps []string) string {
	s := ps[0]
	for _, p := range ps[1:] {
		s += "; " + p
	}
	return s
}
