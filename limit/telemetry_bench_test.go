package limit

import (
	"context"
	"io"
	"log/slog"
	"math"
	"slices"
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
	// The states of one shape and cost run side by side, so that a change
	// in the machine's load between them shows as noise, not as a cost.
	for _, name := range []string{"PerSecond", "PerWindow", "Concurrency"} {
		for _, cost := range []int{1, 3} {
			for _, state := range []string{"off", "on", "traced"} {
				o := shapes[name]
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

// BenchmarkGrantTelemetryAdded measures the same as BenchmarkGrantTelemetry
// on a loaded machine, where runs of one state after another drift more
// than the few nanoseconds measured: each round times a batch of grants in
// each state, back to back and in a rotating order, and the benchmark
// reports the median over its rounds of each state's time a grant less
// off's in that round. An op is one round.
//
//	go test -run '^$' -bench GrantTelemetryAdded -count 10 ./limit/ | benchstat -
func BenchmarkGrantTelemetryAdded(b *testing.B) {
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	defer mp.Shutdown(context.Background())
	tp := sdktrace.NewTracerProvider(sdktrace.WithSampler(sdktrace.AlwaysSample()))
	defer tp.Shutdown(context.Background())
	traced, span := tp.Tracer("bench").Start(context.Background(), "call")
	defer span.End()
	logger := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelDebug}))
	shapes := []struct {
		name string
		o    Options
	}{
		{"PerSecond", Options{PermitsPerSecond: 1e9, Burst: 1000}},
		{"PerWindow", Options{PerWindow: &WindowOptions{Permits: math.MaxInt32, Window: headroom.Duration(time.Hour)}}},
		{"Concurrency", Options{Concurrency: 1000}},
	}
	const batch = 500
	for _, s := range shapes {
		for _, cost := range []int{1, 3} {
			b.Run(s.name+"/cost="+string(rune('0'+cost)), func(b *testing.B) {
				type state struct {
					lim Limiter
					ctx context.Context
				}
				var states [3]state // off, on, traced
				for i := range states {
					o := s.o
					o.MeterProvider = mp
					states[i].ctx = context.Background()
					if i == 2 {
						o.Logger, states[i].ctx = logger, traced
					}
					lim, err := New(o)
					if err != nil {
						b.Fatal(err)
					}
					if i == 0 {
						withoutTelemetry(lim)
					}
					states[i].lim = lim
				}
				var on, tr []float64
				round := 0
				for b.Loop() {
					var took [3]float64
					for k := range states {
						i := (k + round) % len(states)
						st := states[i]
						start := time.Now()
						for range batch {
							lease, err := st.lim.AcquireN(st.ctx, cost)
							if err != nil {
								b.Fatal(err)
							}
							lease.Release()
						}
						took[i] = float64(time.Since(start)) / batch
					}
					on, tr = append(on, took[1]-took[0]), append(tr, took[2]-took[0])
					round++
				}
				b.ReportMetric(median(on), "ns-added-on/grant")
				b.ReportMetric(median(tr), "ns-added-traced/grant")
			})
		}
	}
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}
