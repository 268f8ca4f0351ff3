package limit

import (
	"context"
	"runtime"
	"testing"
	"time"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// A limiter dropped without a Close must not stay registered with the meter
// provider: a service that builds one per host would otherwise leak a
// registration per host for ever.
func TestDroppedLimiterUnregistersItsMetrics(t *testing.T) {
	for name, build := range map[string]func(mp metric.MeterProvider) (Limiter, error){
		"PerSecond": func(mp metric.MeterProvider) (Limiter, error) { return PerSecond(10, WithMeterProvider(mp)) },
		"PerWindow": func(mp metric.MeterProvider) (Limiter, error) {
			return PerWindow(10, time.Second, WithMeterProvider(mp))
		},
		"Concurrency": func(mp metric.MeterProvider) (Limiter, error) { return Concurrency(10, WithMeterProvider(mp)) },
		"Adaptive": func(mp metric.MeterProvider) (Limiter, error) {
			return New(Options{Adaptive: &AdaptiveOptions{}, MeterProvider: mp})
		},
		"AdaptiveRate": func(mp metric.MeterProvider) (Limiter, error) {
			return New(Options{AdaptiveRate: &AdaptiveRateOptions{}, MeterProvider: mp})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r := sdkmetric.NewManualReader()
			mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
			defer mp.Shutdown(context.Background())
			func() { // the limiter is reachable only inside
				lim, err := build(mp)
				if err != nil {
					t.Fatal(err)
				}
				lease, err := lim.Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				lease.Release()
				if len(metricValues(t, r)) == 0 {
					t.Fatal("nothing reported while the limiter is alive")
				}
			}()
			for range 200 {
				if len(metricValues(t, r)) == 0 {
					return
				}
				runtime.GC()
				runtime.Gosched() // cleanups run on their own goroutine
			}
			t.Errorf("still reported after the limiter was dropped: %v", metricValues(t, r))
		})
	}
}
