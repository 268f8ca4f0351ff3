package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/headroom-go/headroom/telemetry"
)

// A run is counted with whether it retried, and timed as a whole and per
// attempt, with the attempt's number: a call throttled once and then
// served is one call that succeeded after a retry, lasting its two
// attempts and the delay between them.
func TestRunRecordsDurationsAndRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := sdkmetric.NewManualReader()
		mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
		defer mp.Shutdown(context.Background())
		p, err := Default(WithName("api"), WithMeterProvider(mp), WithBreaker(nil), WithBudget(nil))
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		_, err = Run(t.Context(), p, func(ctx context.Context) (int, error) {
			calls++
			time.Sleep(100 * time.Millisecond)
			if calls == 1 {
				return 0, &ThrottledError{Err: errors.New("429"), RetryAfter: time.Second}
			}
			return 1, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = Run(t.Context(), p, func(ctx context.Context) (int, error) { return 1, nil })

		var rm metricdata.ResourceMetrics
		if err := r.Collect(context.Background(), &rm); err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		str := func(s attribute.Set, k string) string { v, _ := s.Value(attribute.Key(k)); return v.String() }
		for _, sm := range rm.ScopeMetrics {
			for _, m := range sm.Metrics {
				switch d := m.Data.(type) {
				case metricdata.Sum[int64]:
					if m.Name == telemetry.CallsName {
						for _, dp := range d.DataPoints {
							got["calls "+str(dp.Attributes, telemetry.AttrStop)+" retried="+str(dp.Attributes, telemetry.AttrRetried)] = float64(dp.Value)
						}
					}
				case metricdata.Histogram[float64]:
					for _, dp := range d.DataPoints {
						switch m.Name {
						case telemetry.CallDurationName:
							got["call seconds retried="+str(dp.Attributes, telemetry.AttrRetried)] = dp.Sum
						case telemetry.AttemptDurationName:
							got["attempt "+str(dp.Attributes, telemetry.AttrAttempt)+" "+str(dp.Attributes, telemetry.AttrVerdict)] = dp.Sum
						}
					}
				}
			}
		}
		want := map[string]float64{
			"calls succeeded retried=true":  1,
			"calls succeeded retried=false": 1,
			"call seconds retried=true":     1.2,
			"call seconds retried=false":    0,
			"attempt 1 throttled":           0.1,
			"attempt 2 success":             0.1,
			"attempt 1 success":             0,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("runner metrics (-want +got):\n%s", diff)
		}
	})
}
