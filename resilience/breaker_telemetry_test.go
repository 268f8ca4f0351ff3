package resilience

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/telemetry"
)

// A breaker open for less than a scrape interval never showed: the state
// gauge alone, read after it closed, says closed. The transitions counter
// keeps every change, and the gauge's unit is a state, not a ratio.
func TestBreakerCountsTransitions(t *testing.T) {
	r, mp := metricstest.New(t)
	br, err := NewBreaker(BreakerOptions{Name: "api", ConsecutiveFailures: 1, BreakDuration: time.Second, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	br.record(t0, false, Transient, 0) // open
	if probe, err := br.allow(t0.Add(time.Second)); !probe || err != nil {
		t.Fatalf("after the break: probe %v, %v; want a probe", probe, err)
	}
	br.record(t0.Add(time.Second), true, Success, 0) // half-open, then closed

	entered := map[string]int64{}
	units := map[string]string{}
	for _, p := range metricstest.Collect(t, r) {
		units[p.Name] = p.Unit
		if p.Name == telemetry.BreakerTransitionsName {
			entered[p.Attr(telemetry.AttrBreakerState)] = int64(p.Value)
		}
	}
	want := map[string]int64{metrics.BreakerStateOpen: 1, metrics.BreakerStateHalfOpen: 1, metrics.BreakerStateClosed: 1}
	if diff := cmp.Diff(want, entered); diff != "" {
		t.Errorf("transitions by state entered (-want +got):\n%s", diff)
	}
	if u := units[telemetry.BreakerStateName]; u != "{state}" {
		t.Errorf("breaker state unit %q, want {state}", u)
	}
}
