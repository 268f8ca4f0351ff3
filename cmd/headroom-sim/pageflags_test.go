package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/headroom-go/headroom/cmd/headroom-sim/internal/page"
	"github.com/headroom-go/headroom/sim"
)

// pageWorlds are worlds the page's controls can describe, on short runs:
// the defaults through the drop, steady, one that changes every control,
// and one with a join.
func pageWorlds() []page.World {
	d := page.DefaultWorld()
	d.Duration = 420
	short := d
	short.Scenario, short.Duration = "steady", 120
	other := short
	other.Seed, other.Instances, other.Demand, other.Quota = 7, 3, 1500, 50
	other.Server, other.Window, other.Burst, other.Publish = "token-bucket", 1, 20, "draft-6"
	join := d
	join.Scenario, join.Duration, join.Quota, join.Window = "join", 330, 500, 10
	return []page.World{d, short, other, join}
}

// The command line the page shows for its comparison prints the table the
// page computes, title and cells: the page's flags say what the page runs.
func TestPageComparisonIsTheCommands(t *testing.T) {
	for _, w := range pageWorlds() {
		modes := []string{"AIMD", "CUBIC + quota"}
		if w.Scenario == "drop" {
			modes = nil // every mode: the command without -modes
		}
		head, err := page.Compare(w, modes)
		if err != nil {
			t.Fatal(err)
		}
		rows := [][]string{head.Header}
		for _, m := range head.Modes {
			r, err := page.CompareMode(w, m)
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, r.Row)
		}
		code, out, errs := runCmd(t, append(slices.Clone(head.Flags), "-format", "markdown")...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", head.Flags, code, errs)
		}
		title, printed := markdownTable(out)
		if title != head.Title || !slices.EqualFunc(rows, printed, slices.Equal[[]string]) || !strings.HasSuffix(out, head.Footer) {
			t.Errorf("headroom-sim %s prints\n%s\nthe page computes %q\n%v", strings.Join(head.Flags, " "), out, head.Title, rows)
		}
		if !strings.HasPrefix(head.Command, "go run ./cmd/headroom-sim") {
			t.Errorf("command %q", head.Command)
		}
	}
}

// A panel's tiles at the end of its run are the command's figures for the
// flags the panel shows, options included.
func TestPagePanelIsTheCommands(t *testing.T) {
	for _, s := range []page.Settings{
		{World: pageWorlds()[1], Mode: "AIMD", Options: map[string]float64{"IncreaseStep": 600}},
		{World: pageWorlds()[2], Mode: "CUBIC + quota", Options: map[string]float64{"ReserveFraction": 0.05, "MaxUnitsPerMinute": 2000}},
		{World: pageWorlds()[3], Mode: "quota guard"},
	} {
		l, err := page.Start(s)
		if err != nil {
			t.Fatal(err)
		}
		l.Advance(1e9)
		f := l.Frame(0)
		tiles := map[string]string{}
		for _, tile := range f.Tiles {
			tiles[tile.Name] = tile.Value
		}
		if !f.Done || len(f.Points) == 0 || f.Error != "" {
			t.Fatalf("%+v: done %v, %d points, %q", s, f.Done, len(f.Points), f.Error)
		}
		tilesAreTheCommands(t, tiles, f.Flags)
		if len(s.Options) > 0 && !slices.Contains(f.Flags, "-set") {
			t.Errorf("flags %v: no -set for %v", f.Flags, s.Options)
		}
	}
}

// Bad controls are refused with every problem named, before a run starts.
func TestPageRefusesBadSettings(t *testing.T) {
	w := page.DefaultWorld()
	w.Instances, w.Window, w.Server, w.Seed = 0, 0.5, "round-robin", 0
	_, err := page.Start(page.Settings{World: w, Mode: "AIMD", Options: map[string]float64{"DecreaseFactor": 5}})
	for _, want := range []string{"seed", `unknown server "round-robin"`, "window", "DecreaseFactor"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err %v; want it to name %q", err, want)
		}
	}
	if _, err := page.Start(page.Settings{World: page.DefaultWorld(), Mode: "warp"}); err == nil {
		t.Error("an unknown mode started")
	}
}

// The catalog is the simulator's: its modes with their settings, its
// scenarios, kinds of server and dialects.
func TestCatalogIsTheSimulators(t *testing.T) {
	c := page.NewCatalog()
	var names []string
	for _, m := range c.Modes {
		names = append(names, m.Name)
		if got, _ := sim.ModeNamed(m.Flag); got.Name != m.Name {
			t.Errorf("mode %q: its flag %q names %q", m.Name, m.Flag, got.Name)
		}
	}
	if !slices.Equal(names, modeNames()) || !slices.Equal(c.ServerKinds, sim.ServerKinds()) ||
		!slices.Equal(c.Publishes, sim.Publishes()) || !slices.Equal(c.Scenarios, sim.Scenarios()) || len(c.Bursts) == 0 {
		t.Errorf("catalog %+v", c)
	}
}

func modeNames() []string {
	var s []string
	for _, m := range sim.Modes() {
		s = append(s, m.Name)
	}
	return s
}
