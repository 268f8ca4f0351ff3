package bench

import (
	"context"
	"fmt"
	"os"
	"testing"
	"testing/synctest"
	"time"

	"github.com/failsafe-go/failsafe-go/adaptivelimiter"

	"github.com/headroom-go/headroom/internal/adaptivetest"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// headroomModel drives limit.Adaptive through the model inside a synctest
// bubble: the shell reads time.Since(epoch), which the bubble fakes.
type headroomModel struct {
	clock *adaptivetest.Clock
	lim   *limit.AdaptiveLimiter
}

func (m *headroomModel) Acquire(now time.Duration) (any, bool) {
	m.clock.Advance(now)
	lease, err := m.lim.Acquire(context.Background())
	if err != nil {
		return nil, false
	}
	return &lease, true
}

func (m *headroomModel) Release(now, _ time.Duration, tok any) {
	m.clock.Advance(now)
	tok.(*limit.Lease).Release()
}

func (m *headroomModel) Limit() int {
	n, ok := m.lim.CurrentLimit()
	if !ok {
		return 20 // Initial, before it has an opinion
	}
	return n
}

// failsafeModel drives failsafe-go's adaptivelimiter the same way: it reads
// time.Now, which the bubble fakes, and starts no goroutine of its own, so
// it runs unchanged on model time.
type failsafeModel struct {
	clock *adaptivetest.Clock
	lim   adaptivelimiter.AdaptiveLimiter[any]
}

func (m *failsafeModel) Acquire(now time.Duration) (any, bool) {
	m.clock.Advance(now)
	p, ok := m.lim.TryAcquirePermit()
	return p, ok
}

func (m *failsafeModel) Release(now, _ time.Duration, tok any) {
	m.clock.Advance(now)
	tok.(adaptivelimiter.Permit).Record()
}

func (m *failsafeModel) Limit() int { return m.lim.Limit() }

// comparisonScenario is the model of docs/adaptive-concurrency.md: 100
// workers, exponential service of mean 100 ms (capacity 1000/s), an
// open-loop Poisson load of 1500/s; capacity halves at 45 s and doubles back
// at 90 s.
func comparisonScenario(seed uint64) adaptivetest.Config {
	return adaptivetest.Config{
		Exp:  100 * time.Millisecond,
		Load: 1500,
		Phases: []adaptivetest.Phase{
			{Until: 45 * time.Second, Workers: 100},
			{Until: 90 * time.Second, Workers: 50},
			{Until: 135 * time.Second, Workers: 100},
		},
		Seed: seed,
	}
}

func runHeadroom(t *testing.T, cfg adaptivetest.Config) adaptivetest.Result {
	lim, err := limit.Adaptive(adaptive.ConcurrencyConfig{Maximum: 200})
	if err != nil {
		t.Fatal(err)
	}
	return run(t, cfg, &headroomModel{adaptivetest.NewClock(), lim})
}

func runFailsafe(t *testing.T, cfg adaptivetest.Config) adaptivetest.Result {
	lim := adaptivelimiter.NewBuilder[any]().WithLimits(4, 200, 20).Build()
	return run(t, cfg, &failsafeModel{adaptivetest.NewClock(), lim})
}

func run(t *testing.T, cfg adaptivetest.Config, lim adaptivetest.Limiter) adaptivetest.Result {
	t.Helper()
	r, err := adaptivetest.Run(cfg, lim)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestAdaptiveComparison prints the side-by-side table of
// docs/adaptive-concurrency.md:
//
//	cd bench && go test -run AdaptiveComparison -v
func TestAdaptiveComparison(t *testing.T) {
	cfg := comparisonScenario(1)
	var h, f adaptivetest.Result
	synctest.Test(t, func(t *testing.T) { h = runHeadroom(t, cfg) })
	synctest.Test(t, func(t *testing.T) { f = runFailsafe(t, cfg) })
	fmt.Fprintf(os.Stdout, "unloaded p99 %v\n", cfg.UnloadedP99().Round(time.Millisecond))
	fmt.Fprintln(os.Stdout, "| phase (workers) | limiter | limit mean [min, max] | follow | goodput/s | p50 | p99 | refused |")
	fmt.Fprintln(os.Stdout, "|---|---|---|---|---|---|---|---|")
	for i := range cfg.Phases {
		for _, x := range []struct {
			name string
			r    adaptivetest.Result
		}{{"headroom", h}, {"failsafe-go", f}} {
			p := x.r.Phases[i]
			follow := "—"
			if i > 0 {
				follow = p.Follow.String()
				if p.Follow < 0 {
					follow = "never"
				}
			}
			fmt.Fprintf(os.Stdout, "| %d: %d | %s | %.1f [%d, %d] | %s | %.0f | %v | %v | %.0f%% |\n",
				i+1, p.Workers, x.name, p.MeanLimit, p.MinLimit, p.MaxLimit, follow, p.Goodput,
				p.P50.Round(time.Millisecond), p.P99.Round(time.Millisecond), 100*float64(p.Rejected)/float64(p.Offered))
		}
	}
	for i, p := range h.Phases {
		if c := float64(p.Workers); p.MeanLimit < 0.8*c || p.MeanLimit > 1.2*c {
			t.Errorf("headroom phase %d: limit %.1f, want within ±20%% of %d", i, p.MeanLimit, p.Workers)
		}
		if p.P99 > 2*cfg.UnloadedP99() {
			t.Errorf("headroom phase %d: p99 %v above 2× unloaded", i, p.P99)
		}
		if i > 0 && (p.Follow < 0 || p.Follow > 30*time.Second) {
			t.Errorf("headroom phase %d: follow %v", i, p.Follow)
		}
	}
}

// BenchmarkAdaptive is Acquire+Release with the sampling, serial, for
// headroom and failsafe-go's acquire+record.
func BenchmarkAdaptive(b *testing.B) {
	ctx := context.Background()
	b.Run("headroom", func(b *testing.B) {
		lim, _ := limit.Adaptive(adaptive.ConcurrencyConfig{Maximum: 200})
		b.ReportAllocs()
		for b.Loop() {
			lease, err := lim.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			lease.Release()
		}
	})
	b.Run("failsafe-go", func(b *testing.B) {
		lim := adaptivelimiter.NewBuilder[any]().WithLimits(4, 200, 20).Build()
		b.ReportAllocs()
		for b.Loop() {
			p, ok := lim.TryAcquirePermit()
			if !ok {
				b.Fatal("refused")
			}
			p.Record()
		}
	})
}
