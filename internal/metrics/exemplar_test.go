package metrics

import (
	"context"
	"testing"
	"time"

	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/trace"

	"github.com/headroom-go/headroom/telemetry"
)

// The synchronous measurements were recorded with context.Background(), so
// none carried the caller's trace: now a sampled caller's wait, refusal,
// Redis call and fallback each leave an exemplar with its trace and span.
func TestSynchronousMeasurementsCarryTheCallersTrace(t *testing.T) {
	r, mp := newSDK(t)
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16},
		SpanID:     trace.SpanID{1, 2, 3, 4, 5, 6, 7, 8},
		TraceFlags: trace.FlagsSampled,
	})
	ctx := trace.ContextWithSpanContext(context.Background(), sc)

	l := NewLimiter(mp, "api", KindPerSecond)
	defer l.Close()
	l.Waited(ctx, 30*time.Millisecond)
	g := NewGuard(mp, "quota", nil, func(func(KeyState)) {})
	defer g.Close()
	g.Refused(ctx, "api.example.com", telemetry.ReasonReserve)
	f := NewFleet(mp, "fleet")
	f.Called(ctx, OpTokenBucket, "10.0.0.1:6379", time.Millisecond, true)
	f.FellBack(ctx, true)

	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	check := func(name string, exs []metricdata.Exemplar[float64]) {
		for _, e := range exs {
			if trace.TraceID(e.TraceID) == sc.TraceID() && trace.SpanID(e.SpanID) == sc.SpanID() {
				seen[name] = true
			}
		}
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				for _, p := range d.DataPoints {
					check(m.Name, p.Exemplars)
				}
			case metricdata.Sum[int64]:
				for _, p := range d.DataPoints {
					for _, e := range p.Exemplars {
						if trace.TraceID(e.TraceID) == sc.TraceID() {
							seen[m.Name] = true
						}
					}
				}
			}
		}
	}
	for _, name := range []string{telemetry.WaitDurationName, telemetry.QuotaRefusalsName,
		telemetry.FleetRedisDurationName, telemetry.FleetRedisErrorsName, telemetry.FleetFallbacksName} {
		if !seen[name] {
			t.Errorf("%s: no exemplar with the caller's trace", name)
		}
	}
}
