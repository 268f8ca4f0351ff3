package limit

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit/adaptive"
)

func newReader(t *testing.T) (*sdkmetric.ManualReader, metric.MeterProvider) {
	return metricstest.New(t)
}

// Throttles reported on PerSecond, PerWindow and Concurrency leases were
// dropped, and the adaptive concurrency limit never counted its own: every
// shape counts the throttles its leases carry.
func TestEveryShapeCountsThrottles(t *testing.T) {
	r, mp := newReader(t)
	shapes := map[string]Options{
		"per_second":    {PermitsPerSecond: 10, Burst: 10},
		"per_window":    {PerWindow: &WindowOptions{Permits: 10, Window: headroom.Duration(time.Second)}},
		"concurrency":   {Concurrency: 10},
		"adaptive":      {Adaptive: &adaptive.ConcurrencyConfig{}},
		"adaptive_rate": {AdaptiveRate: &adaptive.RateConfig{}},
	}
	want := map[string]float64{}
	for kind, o := range shapes {
		o.Name, o.MeterProvider = "t", mp
		lim, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		lease, err := lim.Acquire(t.Context())
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		lease.Report(adaptive.Throttled, 0)
		lease.Release()
		want["headroom.limiter.throttles{t,"+kind+"}"] = 1
	}
	got := map[string]float64{}
	for k, v := range metricValues(t, r) {
		if _, ok := want[k]; ok {
			got[k] = v
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("throttles (-want +got):\n%s", diff)
	}
}

// The adaptive concurrency limit fell from its initial limit without a
// single cut counted.
func TestAdaptiveCountsCuts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := newReader(t)
		lim, err := Adaptive(adaptive.ConcurrencyConfig{Initial: 10, Minimum: 2, Maximum: 20}, WithName("a"), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		call := func(throttle bool) {
			lease, err := lim.Acquire(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
			if throttle {
				lease.Report(adaptive.Throttled, 0)
			}
			lease.Release()
		}
		for range 200 { // a baseline
			call(false)
		}
		falls, last := 0, 10
		for range 100 {
			call(true)
			if l := metricValues(t, r)["headroom.limiter.limit{a,adaptive}"]; int(l) < last {
				falls, last = falls+1, int(l)
			}
		}
		m := metricValues(t, r)
		if last >= 10 || falls == 0 {
			t.Fatalf("the limit did not fall: %v", last)
		}
		if got := m["headroom.limiter.cuts{a,adaptive}"]; got != float64(falls) {
			t.Errorf("cuts %v, want %d (the limit fell %d times, to %d)", got, falls, falls, last)
		}
		if got := m["headroom.limiter.throttles{a,adaptive}"]; got != 100 {
			t.Errorf("throttles %v, want 100", got)
		}
		if got := m["headroom.limiter.latency.baseline{a,adaptive}"]; got < 0.009 || got > 0.011 {
			t.Errorf("baseline %vs, want about 0.01", got)
		}
		if _, ok := m["headroom.limiter.latency.round{a,adaptive}"]; !ok {
			t.Errorf("no round latency reported")
		}
	})
}

// Four AcquireN(5) counted 4: the permits counter counts units.
func TestAcquireNCountsPermits(t *testing.T) {
	r, mp := newReader(t)
	lim, err := PerSecond(100, 20, WithName("p"), WithMeterProvider(mp))
	if err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, err := lim.AcquireN(t.Context(), 5); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lim.AcquireN(t.Context(), 5); err == nil {
		t.Fatal("a fifth AcquireN(5) was granted from a burst of 20")
	}
	m := metricValues(t, r)
	got := []float64{
		m["headroom.limiter.leases{p,per_second,acquired}"], m["headroom.limiter.permits{p,per_second,acquired}"],
		m["headroom.limiter.leases{p,per_second,denied,no_permit}"], m["headroom.limiter.permits{p,per_second,denied,no_permit}"],
	}
	if diff := cmp.Diff([]float64{4, 20, 1, 5}, got); diff != "" {
		t.Errorf("leases, permits acquired; leases, permits denied (-want +got):\n%s", diff)
	}
}

// Saturation: permits in use and available, per shape.
func TestShapesReportSaturation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := newReader(t)
		shapes := map[string]Options{
			"per_second":    {PermitsPerSecond: 1, Burst: 10},
			"per_window":    {PerWindow: &WindowOptions{Permits: 10, Window: headroom.Duration(time.Minute)}},
			"concurrency":   {Concurrency: 10},
			"adaptive":      {Adaptive: &adaptive.ConcurrencyConfig{Initial: 10, Maximum: 10}},
			"adaptive_rate": {AdaptiveRate: &adaptive.RateConfig{InitialUnitsPerMinute: 600, MinUnitsPerMinute: 600, MaxUnitsPerMinute: 600, BurstTime: headroom.Duration(time.Second)}},
		}
		want := map[string]float64{}
		got := map[string]float64{}
		var keep []Lease
		for kind, o := range shapes {
			o.Name, o.MeterProvider = "s", mp
			lim, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			lease, err := lim.AcquireN(t.Context(), 3)
			if err != nil {
				t.Fatalf("%s: %v", kind, err)
			}
			keep = append(keep, lease)
			want["in_use/"+kind], want["available/"+kind] = 3, 7
		}
		for k, v := range metricValues(t, r) {
			for _, kind := range []string{"per_second", "per_window", "concurrency", "adaptive", "adaptive_rate"} {
				switch k {
				case "headroom.limiter.in_use{s," + kind + "}":
					got["in_use/"+kind] = v
				case "headroom.limiter.available{s," + kind + "}":
					got["available/"+kind] = v
				}
			}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("saturation (-want +got):\n%s", diff)
		}
		for i := range keep {
			keep[i].Release()
		}
	})
}

// The adaptive rate limiter reports its instance share, ceiling, published
// quota, send rate and pause.
func TestAdaptiveRateReportsItsFigures(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := newReader(t)
		lim, err := AdaptiveRate(adaptive.RateConfig{Instances: 2, InitialUnitsPerMinute: 600, MaxUnitsPerMinute: 6000},
			WithName("r"), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		lim.SetPublishedLimit(1200, time.Minute) // 1200 a minute for both instances
		lease, err := lim.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		lease.Report(adaptive.Throttled, 2*time.Second)
		lease.Release()
		m := metricValues(t, r)
		get := func(name string) float64 { return m["headroom.limiter."+name+"{r,adaptive_rate}"] }
		if got := get("instances"); got != 2 {
			t.Errorf("instances %v, want 2", got)
		}
		if got, want := get("budget_rate"), 2*get("rate"); got != want || got == 0 {
			t.Errorf("budget rate %v, want twice the share %v", got, want)
		}
		if got := get("published_rate"); got != 1200 {
			t.Errorf("published rate %v, want 1200", got)
		}
		if got := get("ceiling"); got != lim.State().MaxRate {
			t.Errorf("ceiling %v, want MaxRate %v", got, lim.State().MaxRate)
		}
		if got := get("paused"); got != 1 {
			t.Errorf("paused %v after a Retry-After, want 1", got)
		}
		if _, ok := m["headroom.limiter.send_rate{r,adaptive_rate}"]; !ok {
			t.Errorf("no send rate reported")
		}
	})
}
