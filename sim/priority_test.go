package sim

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPrioritiesWithoutPrioritiesChangeNothing: outside the mixed scenario
// every request is of the default level, and the mode that reads
// priorities measures exactly what CUBIC + quota does.
func TestPrioritiesWithoutPrioritiesChangeNothing(t *testing.T) {
	plain, with := cubicQuotaMode(), cubicQuotaPrioritiesMode()
	for _, sc := range []string{scenarioDrop} {
		cfg := Config{Scenario: sc, Duration: 7 * time.Minute, NoSeries: true}
		a, err := Run(cfg, plain)
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(cfg, with)
		if err != nil {
			t.Fatal(err)
		}
		b.Mode = a.Mode
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("scenario %s: the priorities mode differs (-CUBIC + quota +priorities):\n%s", sc, diff)
		}
	}
}

// TestMixedScenarioServesCriticalFirst runs the mixed scenario: with
// priorities, no critical request is rejected or gives up, the
// critical p95 wait is at most a tenth of the background's, and the quota
// used stays at 97 % or more, within a point of the mode without
// priorities, where critical requests wait as long as the rest and are
// rejected as often.
func TestMixedScenarioServesCriticalFirst(t *testing.T) {
	for _, seed := range []uint64{1} {
		cfg := Config{Scenario: scenarioMixed, Seed: seed, NoSeries: true}
		plain, err := Run(cfg, cubicQuotaMode())
		if err != nil {
			t.Fatal(err)
		}
		with, err := Run(cfg, cubicQuotaPrioritiesMode())
		if err != nil {
			t.Fatal(err)
		}
		if len(with.ByPriority) != 2 || with.ByPriority[0].Priority != "critical" {
			t.Fatalf("seed %d: ByPriority %+v; want critical, then background", seed, with.ByPriority)
		}
		crit, bg := with.ByPriority[0], with.ByPriority[1]
		if crit.Rejected != 0 || crit.GaveUp != 0 {
			t.Errorf("seed %d: %d critical requests rejected, %d gave up; want none", seed, crit.Rejected, crit.GaveUp)
		}
		if crit.P95Wait*10 > bg.P95Wait {
			t.Errorf("seed %d: critical p95 wait %v, background's %v; want at most a tenth", seed, crit.P95Wait, bg.P95Wait)
		}
		if with.Share < 0.97 || plain.Share-with.Share > 0.01 {
			t.Errorf("seed %d: %.1f%% of the quota used with priorities, %.1f%% without; want 97%% or more, within a point", seed, 100*with.Share, 100*plain.Share)
		}
		if pc := plain.ByPriority[0]; pc.Rejected == 0 || pc.P95Wait < crit.P95Wait*2 {
			t.Errorf("seed %d: without priorities critical requests met %+v; the scenario should hold them back with the rest", seed, pc)
		}
	}
}
