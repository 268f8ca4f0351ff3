package sim_test

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom/sim"
)

// When the other client leaves the seeds' API, the sliding log has the
// units it did not spend in the last minute free at once, and the
// instances have a backlog queued. CUBIC + quota reads that Remaining from
// the headers and spends the backlog out of it within seconds: its rates
// add up to many times the quota for a moment, and not one request of those
// seconds gets a 429, so the rate is the allowance spent, not a limiter
// letting requests go faster than the server accepts them.
func TestQuotaReturnSpendsTheFreeUnitsWithoutA429(t *testing.T) {
	mode, err := sim.ModeNamed("cubic+quota")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(42); seed < 52; seed++ {
		cfg := sim.Config{Seed: seed}.Defaults()
		res, err := sim.Run(cfg, mode)
		if err != nil {
			t.Fatal(err)
		}
		back := cfg.DropAt + cfg.DropFor
		var accepted, throttled, freeAtReturn int
		var peak float64
		for _, s := range res.Series {
			if s.At == back {
				freeAtReturn = s.Quota - s.Used
			}
			if s.At >= back && s.At < back+10*time.Second {
				accepted += s.Accepted
				throttled += s.Throttled
				peak = max(peak, s.Rate)
			}
		}
		perTenSeconds := cfg.Quota / 6 // the quota is per minute
		t.Logf("seed %d: %d units free at %v; %d accepted in the 10 s after, %d 429s; rates add up to %.0f a minute at most",
			seed, freeAtReturn, back, accepted, throttled, peak)
		if throttled != 0 {
			t.Errorf("seed %d: %d 429s in the 10 s after the quota came back, want 0", seed, throttled)
		}
		if accepted <= perTenSeconds {
			t.Errorf("seed %d: %d units accepted in the 10 s after the quota came back, want more than the quota's %d: the backlog spent from the free units",
				seed, accepted, perTenSeconds)
		}
	}
}

// What a throttle-driven mode learns while another client takes half the
// quota must not hold it down once the quota comes back: each finds the
// quota again within two minutes and uses most of it over the run (at
// least 85%: plain CUBIC, which probes a quarter as often as AIMD, has 89%
// on a seed of these).
func TestModesRecoverAfterTheDrop(t *testing.T) {
	for _, name := range []string{"aimd", "cubic", "cubic+quota"} {
		mode, err := sim.ModeNamed(name)
		if err != nil {
			t.Fatal(err)
		}
		for seed := uint64(42); seed < 45; seed++ {
			res, err := sim.Run(sim.Config{Seed: seed, NoSeries: true}, mode)
			if err != nil {
				t.Fatal(err)
			}
			if !res.HasRecovery || res.Recovery > 2*time.Minute || res.Share < 0.85 {
				t.Errorf("%s, seed %d: recovered %v after %v, %.1f%% of the quota; want within 2 min and at least 85%%",
					res.Mode, seed, res.HasRecovery, res.Recovery, 100*res.Share)
			}
		}
	}
}
