package metrics

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/telemetry"
)

// Two live limiters of one name and kind were one series: the SDK added up
// their counters. The second is now name#2, and its name is free again
// once the first closes.
func TestLimiterSameNameIsTwoSeries(t *testing.T) {
	r, mp := newSDK(t)
	a := NewLimiter(mp, "per_second", KindPerSecond)
	b := NewLimiter(mp, "per_second", KindPerSecond)
	defer b.Close()
	a.Acquired()
	b.Acquired()
	b.Acquired()
	got := map[string]float64{}
	for _, p := range collect(t, r) {
		if p.Name == telemetry.LeasesName && p.Attrs[telemetry.AttrOutcome] == OutcomeAcquired {
			got[p.Attrs[telemetry.AttrLimiter]] = p.Value
		}
	}
	if diff := cmp.Diff(map[string]float64{"per_second": 1, "per_second#2": 2}, got); diff != "" {
		t.Errorf("acquired leases by limiter (-want +got):\n%s", diff)
	}
	a.Close()
	c := NewLimiter(mp, "per_second", KindPerSecond)
	defer c.Close()
	if c.live.set != a.live.set {
		t.Errorf("after the first closed, a new limiter did not take its name back")
	}
}

// One AcquireN(5) was counted as one: the permits counter counts units.
func TestLimiterCountsPermits(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "q", KindPerSecond)
	defer m.Close()
	for range 4 {
		m.AcquiredN(5)
	}
	m.DeniedN(telemetry.ReasonNoPermit, 3)
	m.DeniedN(telemetry.ReasonQueueFull, 7)
	got := map[string]float64{}
	for _, p := range collect(t, r) {
		if p.Name == telemetry.LeasesName || p.Name == telemetry.PermitsName {
			got[p.Name+"/"+p.Attrs[telemetry.AttrOutcome]+"/"+p.Attrs[telemetry.AttrReason]] = p.Value
		}
	}
	want := map[string]float64{
		"headroom.limiter.leases/acquired/":          4,
		"headroom.limiter.permits/acquired/":         20,
		"headroom.limiter.leases/denied/no_permit":   1,
		"headroom.limiter.permits/denied/no_permit":  3,
		"headroom.limiter.leases/denied/queue_full":  1,
		"headroom.limiter.permits/denied/queue_full": 7,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("leases and permits (-want +got):\n%s", diff)
	}
}

// The rate kinds report their limit as a rate, the concurrency kinds as
// permits: one metric carried both units.
func TestLimiterLimitUnitByKind(t *testing.T) {
	r, mp := newSDK(t)
	rate := NewLimiter(mp, "r", KindPerWindow)
	defer rate.Close()
	conc := NewLimiter(mp, "c", KindAdaptive)
	defer conc.Close()
	rate.SetLimit(600)
	conc.SetLimit(8)
	got := map[string]string{}
	for _, p := range collect(t, r) {
		if p.Name == telemetry.RateName || p.Name == telemetry.LimitName {
			got[p.Attrs[telemetry.AttrLimiter]] = p.Name + " " + p.Unit
		}
	}
	want := map[string]string{"r": "headroom.limiter.rate {permit}/min", "c": "headroom.limiter.limit {permit}"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("limit gauges (-want +got):\n%s", diff)
	}
}

func TestLimiterSampledFigures(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "s", KindConcurrency)
	defer m.Close()
	m.Sample(func(f Figures) {
		f.Set(InUse, 3)
		f.Set(Available, 7)
	})
	got := map[string]float64{}
	for _, p := range collect(t, r) {
		if p.Name == telemetry.InUseName || p.Name == telemetry.AvailableName {
			got[p.Name] = p.Value
		}
	}
	if diff := cmp.Diff(map[string]float64{telemetry.InUseName: 3, telemetry.AvailableName: 7}, got); diff != "" {
		t.Errorf("figures (-want +got):\n%s", diff)
	}
}
