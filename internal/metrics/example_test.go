package metrics_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/telemetry"
)

func ExampleNewLimiter() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	m := metrics.NewLimiter(mp, "api", metrics.KindConcurrency,
		attribute.String(telemetry.AttrServerAddress, "api.example.com"))
	defer m.Close()

	// What a concurrency limiter of 2 records for three callers.
	m.SetLimit(2)
	m.Acquired()
	m.Acquired()
	m.Denied(telemetry.ReasonNoPermit)

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					outcome, _ := dp.Attributes.Value(telemetry.AttrOutcome)
					what := outcome.String()
					if reason, ok := dp.Attributes.Value(telemetry.AttrReason); ok {
						what += " (" + reason.String() + ")"
					}
					if dp.Value > 0 {
						lines = append(lines, fmt.Sprintf("%s %s: %d", mt.Name, what, dp.Value))
					}
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					host, _ := dp.Attributes.Value(telemetry.AttrServerAddress)
					lines = append(lines, fmt.Sprintf("%s on %s: %g", mt.Name, host.String(), dp.Value))
				}
			}
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// headroom.limiter.leases acquired: 2
	// headroom.limiter.leases denied (no_permit): 1
	// headroom.limiter.limit on api.example.com: 2
	// headroom.limiter.permits acquired: 2
	// headroom.limiter.permits denied (no_permit): 1
}

// An owner that may be dropped without being closed unregisters its
// instruments once it becomes unreachable.
func ExampleLimiter_CloseWhenUnreachable() {
	type bulkhead struct {
		sem chan struct{}
		m   *metrics.Limiter
	}
	b := &bulkhead{sem: make(chan struct{}, 10)}
	b.m = metrics.NewLimiter(nil, "pool", metrics.KindConcurrency)
	b.m.CloseWhenUnreachable(b)
	b.m.SetLimit(float64(cap(b.sem)))
}

func ExampleNewRunner() {
	ctx := context.Background()
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)

	// What the resilience runner records for a call that was throttled
	// once by the dependency and then succeeded. Verdicts and stop reasons
	// are indexes of RunnerVerdicts and RunnerStops.
	r := metrics.NewRunner(mp, "inventory")
	// Durations are left out (timed false), as when no reader wants them.
	r.Attempt(ctx, 2, false, 1, 0, false) // throttled
	r.Retry(ctx, 2, false, 4*time.Second, 1)
	r.Attempt(ctx, 0, false, 2, 0, false) // success
	r.Stop(ctx, 0, true, 0, false)        // succeeded after a retry

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		panic(err)
	}
	var lines []string
	for _, sm := range rm.ScopeMetrics {
		for _, mt := range sm.Metrics {
			switch d := mt.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					what, ok := dp.Attributes.Value(telemetry.AttrVerdict)
					if !ok {
						what, _ = dp.Attributes.Value(telemetry.AttrStop)
					}
					lines = append(lines, fmt.Sprintf("%s %s: %d", mt.Name, what.String(), dp.Value))
				}
			case metricdata.Histogram[float64]:
				for _, dp := range d.DataPoints {
					lines = append(lines, fmt.Sprintf("%s: %d delay of %gs", mt.Name, dp.Count, dp.Sum))
				}
			}
		}
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	// Output:
	// headroom.runner.attempts success: 1
	// headroom.runner.attempts throttled: 1
	// headroom.runner.calls succeeded: 1
	// headroom.runner.delay.duration: 1 delay of 4s
	// headroom.runner.retries throttled: 1
}
