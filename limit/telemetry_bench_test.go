package limit

import (
	"context"
	"io"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// BenchmarkGrantTelemetry measures what telemetry adds to a grant: each
// shape with an SDK meter provider and a reader ("on"), against the same
// shape with its recorder removed ("off"), in one run, for Acquire and for
// AcquireN(3). Compare with benchstat: the budget is 15 ns a grant.
func BenchmarkGrantTelemetry(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	shapes := map[string]Options{
		"PerSecond":   {PermitsPerSecond: 1e9, Burst: 1000},
		"PerWindow":   {PerWindow: &WindowOptions{Permits: math.MaxInt32, Window: headroom.Duration(time.Hour)}},
		"Concurrency": {Concurrency: 1000},
	}
	// A logger at Debug and a sampled span in the context: what a grant
	// costs when both are on and nothing is throttled.
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer tp.Shutdown(context.Background())
	traced, span := tp.Tracer("bench").Start(context.Background(), "call")
	defer span.End()
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for name, o := range shapes {
		for _, state := range []string{"off", "on", "traced"} {
			for _, cost := range []int{1, 3} {
				o := o
				o.MeterProvider = mp
				ctx := context.Background()
				if state == "traced" {
					o.Logger, ctx = logger, traced
				}
				lim, err := New(o)
				if err != nil {
					b.Fatal(err)
				}
				if state == "off" {
					withoutTelemetry(lim)
				}
				b.Run(name+"/cost="+string(rune('0'+cost))+"/telemetry="+state, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						lease, err := lim.AcquireN(ctx, cost)
						if err != nil {
							b.Fatal(err)
						}
						lease.Release()
					}
				})
			}
		}
	}
}

// withoutTelemetry removes lim's recorder: a nil recorder records nothing.
func withoutTelemetry(lim Limiter) {
	switch l := lim.(type) {
	case *perSecond:
		l.metrics.Close()
		l.metrics = nil
	case *perWindow:
		l.metrics.Close()
		l.metrics = nil
	case *bulkhead:
		l.metrics.Close()
		l.metrics = nil
	}
}
