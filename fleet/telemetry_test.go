package fleet

import (
	"context"
	"testing"
	"time"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/headroom-go/headroom/telemetry"
)

// collect returns the sum of a counter's points, and a histogram's count,
// by instrument name.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					got[m.Name] += p.Value
				}
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					got[m.Name] += int64(p.Count)
				}
			}
		}
	}
	return got
}

// Every call to Redis is timed, every failed one counted, and every request
// the failure policy decides counted, under the names telemetry declares.
func TestTelemetryRecordsRedisCalls(t *testing.T) {
	p := startPrivateRedis(t)
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	lim, err := PerSecond(p.client(t), 100, 0, Options{Name: "otel", MeterProvider: mp, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lim.Acquire(ctx)
	lim.Acquire(ctx)
	p.stop()
	for range 4 { // three reach the dead server and open the circuit; the fourth does not
		lim.Acquire(ctx)
	}
	got := collect(t, r)
	want := map[string]int64{
		telemetry.FleetRedisDurationName: 5,
		telemetry.FleetRedisErrorsName:   3,
		telemetry.FleetFallbacksName:     4,
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s = %d, want %d", name, got[name], n)
		}
	}
}
