package main

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

func TestCellGoal(t *testing.T) {
	for _, c := range []struct {
		publish string
		ideal   figure
		want    goal
	}{
		{"draft-6", figure{1, 0}, goal{MinShare: 0.95, MaxThrottled: 0.01}},
		{"retry-after", figure{0.96, 0}, goal{MinShare: 0.95, MaxThrottled: 0.01}},
		{"none", figure{0.91, 0.02}, goal{MinShare: 0.90, MaxThrottled: 0.05}},
		// The ideal falls short: 97% of its share, a point more throttled.
		{"none", figure{0.5, 0}, goal{MinShare: 0.485, MaxThrottled: 0.01, FromIdeal: true}},
		{"draft-3", figure{0.94, 0}, goal{MinShare: 0.97 * 0.94, MaxThrottled: 0.01, FromIdeal: true}},
		{"draft-3", figure{0.99, 0.02}, goal{MinShare: 0.97 * 0.99, MaxThrottled: 0.03, FromIdeal: true}},
	} {
		got := cellGoal(c.publish, c.ideal)
		if math.Abs(got.MinShare-c.want.MinShare) > 1e-12 || math.Abs(got.MaxThrottled-c.want.MaxThrottled) > 1e-12 || got.FromIdeal != c.want.FromIdeal {
			t.Errorf("%s, ideal %+v: goal %+v, want %+v", c.publish, c.ideal, got, c.want)
		}
	}
	g := goal{MinShare: 0.95, MaxThrottled: 0.01}
	for _, c := range []struct {
		f    figure
		want bool
	}{{figure{0.95, 0.01}, true}, {figure{0.9499, 0}, false}, {figure{1, 0.0101}, false}} {
		if g.met(c.f) != c.want {
			t.Errorf("%+v against %+v: met %v, want %v", c.f, g, !c.want, c.want)
		}
	}
}

// TestGoalsTable: -goals prints each cell's figure, the ideal's and its
// goal, and the count of cells met, which agrees with the rows.
func TestGoalsTable(t *testing.T) {
	args := []string{"-modes", "no-limiter", "-goals", "-scenario", "steady", "-server", "sliding-log,leaky-bucket",
		"-window", "1s", "-per-second", "20", "-publish", "none,draft-6", "-instances", "1", "-demand", "3000",
		"-duration", "1m", "-costs", "1"}
	code, out, errs := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	rows, met := 0, 0
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "sliding log") || strings.HasPrefix(line, "leaky bucket") {
			rows++
			met += strings.Count(line, "✓")
			if strings.Count(line, "✓")+strings.Count(line, "✗") != 2 || strings.Count(line, "%") != 5 {
				t.Errorf("row %q: want the ideal's share and two cells, each with its mark", line)
			}
		}
	}
	if rows != 2 || !strings.Contains(out, "none") || !strings.Contains(out, "draft-6") || !strings.Contains(out, "ideal") ||
		!strings.Contains(out, fmt.Sprintf("%d of 4 cells meet their goal.", met)) {
		t.Errorf("%d rows, %d met; want 2 rows of 2 cells and a count that agrees:\n%s", rows, met, out)
	}
	code, out, errs = runCmd(t, append(args, "-format", "json")...)
	var cells []goalRow
	if err := json.Unmarshal([]byte(out), &cells); code != 0 || err != nil || len(cells) != 4 {
		t.Fatalf("json: exit %d, %v, %d cells: %s %s", code, err, len(cells), errs, out)
	}
	fromIdeal := 0
	for _, c := range cells {
		if c.IdealThrottledShare != 0 || c.IdealAllowanceShare < 0.3 {
			t.Errorf("%+v: the ideal client should have no 429 and a good share", c)
		}
		if c.GoalFromIdeal {
			fromIdeal++
			if c.Server != "leaky-bucket" || math.Abs(c.GoalMinShare-0.97*c.IdealAllowanceShare) > 1e-4 {
				t.Errorf("%+v: only nginx without a burst is beyond every client, its goal 97%% of the ideal's", c)
			}
		}
	}
	if fromIdeal != 2 {
		t.Errorf("%d goals taken from the ideal client's figure; want nginx's two", fromIdeal)
	}
}
