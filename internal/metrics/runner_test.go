package metrics

import (
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/telemetry"

	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// runnerSums reads every int64 sum as "name verdict/stop self_imposed" →
// value, and every histogram's count the same way.
func runnerSums(t *testing.T, r *sdkmetric.ManualReader) (map[string]int64, map[string]uint64) {
	t.Helper()
	sums, counts := map[string]int64{}, map[string]uint64{}
	for _, p := range metricstest.Collect(t, r) {
		k := p.Name
		for _, a := range []string{telemetry.AttrRunner, telemetry.AttrVerdict, telemetry.AttrSelfImposed, telemetry.AttrStop, telemetry.AttrRetried, telemetry.AttrAttempt, telemetry.AttrBreakerState} {
			if v, ok := p.Attrs.Value(attribute.Key(a)); ok {
				k += " " + v.String()
			}
		}
		if p.Kind == "histogram" {
			counts[k] = p.Count
		} else {
			sums[k] = int64(p.Value)
		}
	}
	return sums, counts
}

func TestRunnerRecords(t *testing.T) {
	reader, mp := metricstest.New(t)
	ctx := context.Background()

	r := NewRunner(mp, "api")
	r.Attempt(ctx, 2, true, 1, time.Millisecond, true)
	r.Retry(ctx, 2, true, 250*time.Millisecond, 1)
	r.Attempt(ctx, 1, false, 2, time.Second, true)
	r.Retry(ctx, 1, false, time.Second, 1)
	r.Attempt(ctx, 0, false, 12, time.Second, true) // numbers past 8 share 8
	r.Stop(ctx, 0, true, 2*time.Second, true)
	r.Attempt(ctx, 0, false, 1, 0, false) // untimed: counted only
	r.Stop(ctx, 0, false, 0, false)
	r.BudgetDenied(ctx)
	r.Attempt(ctx, 99, false, 1, 0, true) // out of range: ignored
	r.Stop(ctx, -1, false, 0, true)
	b := NewBreaker(mp, "api")
	b.State(ctx, BreakerOpen)
	b.Entered(ctx, BreakerOpen)

	sums, counts := runnerSums(t, reader)
	wantSums := map[string]int64{
		telemetry.AttemptsName + " api throttled true": 1,
		telemetry.AttemptsName + " api transient":      1,
		telemetry.AttemptsName + " api success":        2,
		telemetry.RetriesName + " api throttled true":  1,
		telemetry.RetriesName + " api transient":       1,
		telemetry.CallsName + " api succeeded true":    1,
		telemetry.CallsName + " api succeeded false":   1,
		telemetry.BudgetDenialsName + " api":           1,
		telemetry.BreakerStateName + " api":            BreakerOpen,
		telemetry.BreakerTransitionsName + " api open": 1,
	}
	if d := cmp.Diff(wantSums, sums); d != "" {
		t.Errorf("sums (-want +got):\n%s", d)
	}
	wantCounts := map[string]uint64{
		telemetry.DelayDurationName + " api throttled true":     1,
		telemetry.DelayDurationName + " api transient":          1,
		telemetry.AttemptDurationName + " api throttled true 1": 1,
		telemetry.AttemptDurationName + " api transient 2":      1,
		telemetry.AttemptDurationName + " api success 8":        1,
		telemetry.CallDurationName + " api succeeded true":      1,
	}
	if d := cmp.Diff(wantCounts, counts); d != "" {
		t.Errorf("histograms (-want +got):\n%s", d)
	}
}

func TestRunnerNil(t *testing.T) {
	var r *Runner
	ctx := context.Background()
	r.Attempt(ctx, 0, false, 1, 0, true)
	r.Retry(ctx, 0, false, 0, 1)
	r.Stop(ctx, 0, false, 0, true)
	r.BudgetDenied(ctx)
	var b *Breaker
	b.State(ctx, 0)
}

func TestRunnerAllocatesNothing(t *testing.T) {
	_, mp := metricstest.New(t)
	ctx := context.Background()
	for name, r := range map[string]*Runner{"sdk": NewRunner(mp, "api"), "global": NewRunner(nil, "api")} {
		r.Attempt(ctx, 0, false, 1, time.Millisecond, true)
		r.Stop(ctx, 0, false, time.Millisecond, true)
		if n := testing.AllocsPerRun(100, func() {
			r.Attempt(ctx, 0, false, 1, time.Millisecond, true)
			r.Stop(ctx, 0, false, time.Millisecond, true)
		}); n != 0 {
			t.Errorf("%s: %v allocations per success", name, n)
		}
	}
}

func BenchmarkRunnerSuccess(b *testing.B) {
	_, mp := metricstest.New(b)
	ctx := context.Background()
	for name, r := range map[string]*Runner{"sdk": NewRunner(mp, "api"), "global": NewRunner(nil, "api")} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r.Attempt(ctx, 0, false, 1, time.Millisecond, r.Timed(ctx))
				r.Stop(ctx, 0, false, time.Millisecond, r.Timed(ctx))
			}
		})
	}
}
