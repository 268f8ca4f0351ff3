package adaptive

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom/internal/adaptivetest"
)

// modelCore drives the engine core directly on model time.
type modelCore struct{ c *Concurrency }

func (m modelCore) Acquire(time.Duration) (any, bool) { return nil, grab(m.c, 1) }
func (m modelCore) Release(now, latency time.Duration, _ any) {
	m.c.Release(now, latency, 1, Success)
}
func (m modelCore) Limit() int { return m.c.Limit() }

// runModel runs cfg on the engine c.
func runModel(t *testing.T, cfg adaptivetest.Config, c *Concurrency) adaptivetest.Result {
	t.Helper()
	r, err := adaptivetest.Run(cfg, modelCore{c})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// The evaluation of the adaptive concurrency limit on the engine core: a dependency with c workers
// and a FIFO queue (package adaptivetest, which the bench module drives too),
// exponential service times of mean 100 ms, driven at 1.5× its capacity by
// an open-loop Poisson load. The limit settles within ±20 % of c, admitted
// calls' p99 stays within 2× the unloaded p99, and after capacity halves and
// doubles back the limit's one-second mean is inside the band within 30 s.
//
// The excess over c is a few slots whatever c is (the queue it takes for the
// round's fastest call to pass Multiple × p10), so at c = 20 it is about
// +20 %; see docs/adaptive-concurrency.md for that and for how the settle
// point depends on the service-time distribution.
func TestConcurrencyModelSettlesAndFollows(t *testing.T) {
	cfg := adaptivetest.Config{
		Exp:  100 * time.Millisecond,
		Load: 1.5 * 1000,
		Phases: []adaptivetest.Phase{
			{Until: 45 * time.Second, Workers: 100},
			{Until: 90 * time.Second, Workers: 50},
			{Until: 135 * time.Second, Workers: 100},
		},
		Seed: 1,
		Hold: 5 * time.Second,
	}
	r := runModel(t, cfg, newConc(t, ConcurrencyConfig{}))
	for i, p := range r.Phases {
		t.Logf("c=%d: limit mean %.1f [%d, %d], follow %v, p50 %v, p99 %v, goodput %.0f/s, refused %d of %d",
			p.Workers, p.MeanLimit, p.MinLimit, p.MaxLimit, p.Follow, p.P50, p.P99, p.Goodput, p.Rejected, p.Offered)
		if c := float64(p.Workers); p.MeanLimit < 0.8*c || p.MeanLimit > 1.2*c {
			t.Errorf("phase %d: limit settled at %.1f, want within ±20%% of %d", i, p.MeanLimit, p.Workers)
		}
		if p.P99 > 2*cfg.UnloadedP99() {
			t.Errorf("phase %d: admitted p99 %v, want at most 2 × the unloaded %v", i, p.P99, cfg.UnloadedP99())
		}
		if i > 0 && (p.Follow < 0 || p.Follow > 30*time.Second) {
			t.Errorf("phase %d: followed the capacity change in %v, want within 30s", i, p.Follow)
		}
	}
}

// The drift guardrail, with a dependency that stays slow for 30 minutes:
// its capacity collapses from 50 workers to 2 (other clients are flooding
// it, say), below Minimum, so even at Minimum every call queues and the
// whole five-minute window fills with slow calls. Rounds are one limit's
// worth of completions and the dependency completes 5 calls a second, so
// the way down takes a couple of minutes. With the guardrail the limit then
// stays at Minimum to the incident's end and recovers within 60 s
// afterwards (+1 a round of 400 ms from 4 to the band around 50); without it (the ablation) the p10 follows the queued latency
// up, the round's fastest call stops looking slow, and the limit climbs
// back towards Maximum while the dependency is still drowning.
func TestConcurrencyModelSlowDependency30Minutes(t *testing.T) {
	cfg := adaptivetest.Config{
		Exp:  400 * time.Millisecond,
		Load: 1.5 * 125,
		Phases: []adaptivetest.Phase{
			{Until: 2 * time.Minute, Workers: 50},
			{Until: 32 * time.Minute, Workers: 2},
			{Until: 34 * time.Minute, Workers: 50},
		},
		Seed: 1,
	}
	peak := func(r adaptivetest.Result) int {
		m := 0
		for _, v := range r.Trace[int(7*time.Minute/(100*time.Millisecond)):int(32*time.Minute/(100*time.Millisecond))] {
			m = max(m, v)
		}
		return m
	}

	c := newConc(t, ConcurrencyConfig{})
	r := runModel(t, cfg, c)
	incident, after := r.Phases[1], r.Phases[2]
	b, _ := c.Baseline()
	t.Logf("guarded: incident limit mean %.1f, peak %d, p99 %v; after: follow %v, mean %.1f; baseline %v, measured p10 %v",
		incident.MeanLimit, peak(r), incident.P99, after.Follow, after.MeanLimit, b, c.base.Measured())
	if p := peak(r); p > 2*defaultMinimum {
		t.Errorf("guarded: the limit reached %d from 5 minutes into the incident to its end, want at most %d", p, 2*defaultMinimum)
	}
	if after.Follow < 0 || after.Follow > 60*time.Second {
		t.Errorf("guarded: recovered in %v after the incident, want within 60s", after.Follow)
	}

	u := newConc(t, ConcurrencyConfig{})
	u.base.doubling = -1 // no guardrail: the baseline is the raw five-minute p10
	ru := runModel(t, cfg, u)
	t.Logf("unguarded: incident limit mean %.1f, peak %d, p99 %v", ru.Phases[1].MeanLimit, peak(ru), ru.Phases[1].P99)
	if p := peak(ru); p < 50 {
		t.Errorf("unguarded: peak limit %d during the incident; the ablation should show the drift (≥ 50)", p)
	}
}
