package adaptivetest_test

import (
	"errors"
	"math"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/adaptivetest"
)

func TestRunRejectsEveryProblemAtOnce(t *testing.T) {
	cfg := adaptivetest.Config{Exp: -1, Load: math.NaN(), Phases: []adaptivetest.Phase{{Until: time.Second, Workers: -1}, {Until: time.Second}}, Every: -1, Band: -1, Hold: -1}
	_, err := adaptivetest.Run(cfg, &bulkhead{limit: 1})
	if err == nil {
		t.Fatal("Run accepted a config with seven problems")
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if !errors.As(e, &ce) {
			t.Fatalf("%v is not a *headroom.ConfigError", e)
		}
		fields = append(fields, ce.Field)
	}
	want := []string{"Exp", "Load", "Phases[0].Workers", "Phases[1].Until", "Every", "Band", "Hold"}
	if len(fields) != len(want) {
		t.Fatalf("problems %q, want %q", fields, want)
	}
	for i := range want {
		if fields[i] != want[i] {
			t.Fatalf("problems %q, want %q", fields, want)
		}
	}
	if _, err := adaptivetest.Run(adaptivetest.Config{Load: 1}, &bulkhead{limit: 1}); err == nil {
		t.Error("Run without phases succeeded")
	}
}

// With workers to spare nobody queues: latency is the service time, whose
// median is Floor + Exp·ln 2, and the goodput is the load.
func TestRunWithoutQueueingLatencyIsService(t *testing.T) {
	cfg := adaptivetest.Config{Floor: 10 * time.Millisecond, Exp: 100 * time.Millisecond, Load: 200, Seed: 7,
		Phases: []adaptivetest.Phase{{Until: 60 * time.Second, Workers: 1000}}}
	r, err := adaptivetest.Run(cfg, &bulkhead{limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	p := r.Phases[0]
	if p.Rejected != 0 || p.Admitted != p.Offered {
		t.Errorf("refused %d of %d with a limit far above the load", p.Rejected, p.Offered)
	}
	if math.Abs(p.Goodput-200) > 10 {
		t.Errorf("goodput %.1f/s, want about the load of 200/s", p.Goodput)
	}
	median := cfg.Floor + time.Duration(float64(cfg.Exp)*math.Ln2)
	if d := p.P50 - median; d < -5*time.Millisecond || d > 5*time.Millisecond {
		t.Errorf("p50 %v, want about %v", p.P50, median)
	}
	if p.P99 > cfg.UnloadedP99()*11/10 {
		t.Errorf("p99 %v, want at most about the unloaded %v", p.P99, cfg.UnloadedP99())
	}
	if len(r.Trace) != 600 || p.MeanLimit != 1000 || p.MinLimit != 1000 || p.Follow != 0 {
		t.Errorf("trace of %d samples, limit mean %.1f min %d, follow %v; want 600, 1000, 1000, 0",
			len(r.Trace), p.MeanLimit, p.MinLimit, p.Follow)
	}
}

// A limit above the workers lets a queue build: latency is service plus
// queueing, so the median passes the unloaded p99. When the workers come
// back, the limit (here fixed) is far outside their band and never follows.
func TestRunQueueingAddsToLatency(t *testing.T) {
	cfg := adaptivetest.Config{Exp: 100 * time.Millisecond, Load: 150, Seed: 1,
		Phases: []adaptivetest.Phase{{Until: 20 * time.Second, Workers: 100}, {Until: 40 * time.Second, Workers: 5}}}
	r, err := adaptivetest.Run(cfg, &bulkhead{limit: 50})
	if err != nil {
		t.Fatal(err)
	}
	calm, slow := r.Phases[0], r.Phases[1]
	if calm.P50 > cfg.UnloadedP99() {
		t.Errorf("with 100 workers for 50 slots: p50 %v, want below the unloaded p99 %v", calm.P50, cfg.UnloadedP99())
	}
	// 5 workers at 100 ms serve 50/s: 50 slots queue 1 s deep.
	if slow.P50 < 500*time.Millisecond || slow.Goodput > 55 {
		t.Errorf("with 5 workers: p50 %v, goodput %.1f/s; want a queue of about 1s and at most 50/s", slow.P50, slow.Goodput)
	}
	if slow.Rejected == 0 || slow.Follow != -1 {
		t.Errorf("with 5 workers: refused %d, follow %v; want refusals, and a fixed 50 never in the band around 5", slow.Rejected, slow.Follow)
	}
}

func TestRunIsDeterministic(t *testing.T) {
	cfg := adaptivetest.Config{Exp: 50 * time.Millisecond, Load: 300, Seed: 3, Phases: []adaptivetest.Phase{{Until: 10 * time.Second, Workers: 10}}}
	a, _ := adaptivetest.Run(cfg, &bulkhead{limit: 12})
	b, _ := adaptivetest.Run(cfg, &bulkhead{limit: 12})
	if a.Phases[0] != b.Phases[0] {
		t.Errorf("two runs of one seed differ:\n%+v\n%+v", a.Phases[0], b.Phases[0])
	}
	cfg.Seed = 4
	if c, _ := adaptivetest.Run(cfg, &bulkhead{limit: 12}); c.Phases[0] == a.Phases[0] {
		t.Error("another seed gave the same run")
	}
}

// A quiet scenario still has a sample for every Every up to the end.
func TestRunSamplesToTheEndOfAQuietRun(t *testing.T) {
	r, err := adaptivetest.Run(adaptivetest.Config{Exp: time.Millisecond, Load: 0.01, Phases: []adaptivetest.Phase{{Until: 10 * time.Second, Workers: 1}}}, &bulkhead{limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Trace) != 100 || r.Phases[0].MeanLimit != 3 {
		t.Errorf("trace of %d samples, mean limit %.1f; want 100, 3", len(r.Trace), r.Phases[0].MeanLimit)
	}
}

func TestClockAdvancesTheBubbleToModelTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		c := adaptivetest.NewClock()
		c.Advance(1500 * time.Millisecond)
		if got := time.Since(start); got != 1500*time.Millisecond {
			t.Fatalf("after Advance(1.5s): %v", got)
		}
		c.Advance(time.Second) // in the past: returns at once
		if got := time.Since(start); got != 1500*time.Millisecond {
			t.Fatalf("after Advance to a past time: %v, want still 1.5s", got)
		}
	})
}
