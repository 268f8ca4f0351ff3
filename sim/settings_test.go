package sim

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
)

// A mode rebuilt with its settings at their defaults is the mode Modes
// gives: the defaults the page shows are the ones the command runs.
func TestSettingsDefaultsAreTheModes(t *testing.T) {
	cfg := Config{Scenario: scenarioDrop, Duration: 150 * time.Second, DropAt: time.Minute, NoSeries: true}
	for _, m := range Modes() {
		defaults := map[string]float64{}
		for _, s := range m.Settings() {
			defaults[s.Name] = s.Default
		}
		for _, values := range []map[string]float64{nil, defaults} {
			rebuilt, err := m.With(values)
			if err != nil {
				t.Fatalf("%s.With(%v): %v", m.Name, values, err)
			}
			want, _ := Run(cfg, m)
			got, err := Run(cfg, rebuilt)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s with %v differs from the mode (-mode +rebuilt):\n%s", m.Name, values, d)
			}
		}
	}
}

// Every mode that drives an engine a reader can tune has settings, each
// inside its own range; a mode without one (no limiter, the ideal client)
// has none, and runs as it is.
func TestEveryLimiterHasSettings(t *testing.T) {
	tuned := []string{"fixed rate", "AIMD", "CUBIC", "adaptive concurrency", "quota guard", "CUBIC + quota"}
	for _, name := range tuned {
		if m, err := ModeNamed(name); err != nil || len(m.Settings()) == 0 {
			t.Errorf("%s: %d settings, %v", name, len(m.Settings()), err)
		}
	}
	for _, m := range Modes() {
		for _, s := range m.Settings() {
			if !(s.Min <= s.Default && s.Default <= s.Max) || s.Help == "" || s.Group == "" {
				t.Errorf("%s.%s: %+v", m.Name, s.Name, s)
			}
		}
	}
}

// A setting changes the run: a bigger AIMD step climbs by bigger steps, a
// CUBIC capped below the quota stays under the cap and meets fewer 429s.
func TestSettingsChangeTheRun(t *testing.T) {
	cfg := Config{Scenario: scenarioSteady, Duration: 3 * time.Minute}
	run := func(name string, values map[string]float64) *Result {
		m, _ := ModeNamed(name)
		m, err := m.With(values)
		if err != nil {
			t.Fatal(err)
		}
		res, err := Run(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	// After the slow start's first cut (by 60 s here), the rate rises by
	// at most one step a second: the two instances' half-steps (their sum
	// rounded in float64).
	rise := func(res *Result) float64 {
		most := 0.0
		for i := 61; i < len(res.Series); i++ {
			most = max(most, res.Series[i].Rate-res.Series[i-1].Rate)
		}
		return most
	}
	if small, big := rise(run("aimd", nil)), rise(run("aimd", map[string]float64{"IncreaseStep": 600})); !(small > 0 && small <= 120+1e-9 && big > 120 && big <= 600+1e-9) {
		t.Errorf("AIMD: the largest rise in a second is %v units a minute with the default step of 120, %v with 600", small, big)
	}
	capped, free := run("cubic", map[string]float64{"MaxUnitsPerMinute": 2700}), run("cubic", nil)
	highest := 0.0
	for _, s := range capped.Series {
		highest = max(highest, s.Rate)
	}
	if !(capped.Throttled < free.Throttled) || highest != 2700 {
		t.Errorf("CUBIC: %d 429s capped at 2,700 (the rate at most %v), %d uncapped", capped.Throttled, highest, free.Throttled)
	}
}

// With lists every problem at once, each a *headroom.ConfigError: an unknown
// name, a value out of range, a fraction where a count goes, a combination
// the engine refuses.
func TestWithListsEveryProblem(t *testing.T) {
	aimd, _ := ModeNamed("aimd")
	_, err := aimd.With(map[string]float64{"Nope": 1, "DecreaseFactor": 2, "QueueLimit": 500})
	if !errors.Is(err, headroom.ErrConfig) {
		t.Fatalf("err = %v; want a configuration error", err)
	}
	for _, want := range []string{"AIMD.Nope", "IncreaseStep", "AIMD.DecreaseFactor = 2: want 0.01 to 0.99", "AIMD.QueueLimit = 500: want one of"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("err lacks %q:\n%v", want, err)
		}
	}
	guard, _ := ModeNamed("quota guard")
	if _, err := guard.With(map[string]float64{"QueueLimit": 1.5}); !errors.Is(err, headroom.ErrConfig) ||
		!strings.Contains(err.Error(), "quota guard.QueueLimit = 1.5: want a whole number") {
		t.Errorf("a fraction of a request: %v", err)
	}
	if _, err := aimd.With(map[string]float64{"MinUnitsPerMinute": 5000, "MaxUnitsPerMinute": 3000}); !errors.Is(err, headroom.ErrConfig) ||
		!strings.Contains(err.Error(), "MinUnitsPerMinute") {
		t.Errorf("a minimum above the maximum: %v", err)
	}
	none, _ := ModeNamed("no limiter")
	if _, err := none.With(map[string]float64{"IncreaseStep": 1}); !errors.Is(err, headroom.ErrConfig) {
		t.Errorf("a setting for the mode without one: %v", err)
	}
	if m, err := none.With(nil); err != nil || m.Name != "no limiter" {
		t.Errorf("no settings for the mode without one: %v, %v", m.Name, err)
	}
}
