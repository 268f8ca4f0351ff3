package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/table"
	"github.com/headroom-go/headroom/sim"
)

// runGoals runs every mode and the ideal client against every server of
// o.cfgs and prints, for each cell, the mode's figure, the ideal's and the
// goal, and how many cells meet theirs.
func runGoals(o *options, stdout, stderr io.Writer) int {
	cells, err := gridGoals(o.modes, o.cfgs, o.seeds)
	if err != nil {
		return failed(stderr, err)
	}
	return writeAs(o.format, stderr,
		func() error { return writeGoalsJSON(stdout, cells) },
		func() error { return writeGoalsCSV(stdout, cells) },
		func() error { return writeGoalsTable(stdout, o, cells) })
}

// goalsAbout says what the goals are, under the title.
const goalsAbout = `Each cell: units accepted as a share of the allowance / 429s as a share of the requests sent, and
whether it meets its goal: at least 95% of the allowance with at most 1% throttled where the server
publishes anything (a Retry-After alone counts), 90% and 5% where it publishes nothing; where the
ideal client falls short of that, 97% of the ideal's share with at most 1 point more throttled
than it. The ideal client reads no header and is never throttled: its share is the same in every
column (-format json or csv gives each cell's goal).
`

// writeGoalsTable writes the goals as the table of servers is laid out: a
// row per server, the ideal client's share, a column per publish.
func writeGoalsTable(w io.Writer, o *options, cells []goalCell) error {
	fmt.Fprintf(w, "Goals: %s\n%s\n", serverTableTitle(o), goalsAbout)
	type rowKey struct {
		mode   string
		server sim.Server // Publish and EpochCeil cleared
		quota  int
	}
	var order []rowKey
	var publishes []string
	byRow := map[rowKey]map[string]goalCell{}
	for _, c := range cells {
		s := c.Config.Defaults().Server
		k := rowKey{c.Mode, s, c.Config.Quota}
		k.server.Publish, k.server.EpochCeil = "", false
		if byRow[k] == nil {
			byRow[k] = map[string]goalCell{}
			order = append(order, k)
		}
		byRow[k][s.Publish] = c
		if !slices.Contains(publishes, s.Publish) {
			publishes = append(publishes, s.Publish)
		}
	}
	withMode := len(o.modes) > 1
	head := []string{"Server", "Window", "Quota", "ideal"}
	if withMode {
		head = append([]string{"Mode"}, head...)
	}
	rows := [][]string{append(head, publishes...)}
	for _, k := range order {
		row := []string{bucketLabel(sim.Config{Server: k.server, Quota: k.quota}), table.Human(k.server.Window), table.Thousands(k.quota)}
		if withMode {
			row = append([]string{k.mode}, row...)
		}
		var ideal string
		for _, p := range publishes {
			if c, ok := byRow[k][p]; ok && ideal == "" {
				ideal = fmt.Sprintf("%.1f%%", 100*c.Ideal.Share)
			}
		}
		row = append(row, ideal)
		for _, p := range publishes {
			c, ok := byRow[k][p]
			if !ok {
				row = append(row, "-")
				continue
			}
			mark := "✗"
			if c.Met {
				mark = "✓"
			}
			row = append(row, fmt.Sprintf("%.1f%% / %.2f%% %s", 100*c.Got.Share, 100*c.Got.Throttled, mark))
		}
		rows = append(rows, row)
	}
	if err := table.WriteRows(w, rows, o.format == "markdown"); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n"+goalSummary(cells, o.modes))
	return err
}

// goalRow is one cell in the JSON and CSV forms.
type goalRow struct {
	Mode                string  `json:"mode"`
	Server              string  `json:"server"`
	WindowS             float64 `json:"window_s"`
	Quota               int     `json:"quota"`
	Burst               int     `json:"burst"`
	Publish             string  `json:"publish"`
	AllowanceShare      float64 `json:"allowance_share"`
	ThrottledShare      float64 `json:"throttled_share"`
	IdealAllowanceShare float64 `json:"ideal_allowance_share"`
	IdealThrottledShare float64 `json:"ideal_throttled_share"`
	GoalMinShare        float64 `json:"goal_min_share"`
	GoalMaxThrottled    float64 `json:"goal_max_throttled"`
	GoalFromIdeal       bool    `json:"goal_from_ideal"`
	Met                 bool    `json:"met"`
}

func toGoalRow(c goalCell) goalRow {
	cfg := c.Config.Defaults()
	return goalRow{Mode: c.Mode, Server: cfg.Server.Kind, WindowS: cfg.Server.Window.Seconds(), Quota: cfg.Quota,
		Burst: cfg.Server.Burst, Publish: cfg.Server.Publish,
		AllowanceShare: round(c.Got.Share, 4), ThrottledShare: round(c.Got.Throttled, 4),
		IdealAllowanceShare: round(c.Ideal.Share, 4), IdealThrottledShare: round(c.Ideal.Throttled, 4),
		GoalMinShare: round(c.Goal.MinShare, 4), GoalMaxThrottled: round(c.Goal.MaxThrottled, 4),
		GoalFromIdeal: c.Goal.FromIdeal, Met: c.Met}
}

func writeGoalsJSON(w io.Writer, cells []goalCell) error {
	rows := make([]goalRow, 0, len(cells))
	for _, c := range cells {
		rows = append(rows, toGoalRow(c))
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rows)
}

func writeGoalsCSV(w io.Writer, cells []goalCell) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"mode", "server", "window_s", "quota", "burst", "publish", "allowance_share", "throttled_share",
		"ideal_allowance_share", "ideal_throttled_share", "goal_min_share", "goal_max_throttled", "goal_from_ideal", "met"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, c := range cells {
		r := toGoalRow(c)
		cw.Write([]string{r.Mode, r.Server, f(r.WindowS), strconv.Itoa(r.Quota), strconv.Itoa(r.Burst), r.Publish,
			f(r.AllowanceShare), f(r.ThrottledShare), f(r.IdealAllowanceShare), f(r.IdealThrottledShare),
			f(r.GoalMinShare), f(r.GoalMaxThrottled), strconv.FormatBool(r.GoalFromIdeal), strconv.FormatBool(r.Met)})
	}
	cw.Flush()
	return cw.Error()
}
