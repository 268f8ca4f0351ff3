package metrics

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-go/headroom/telemetry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The fast path with telemetry on (an SDK meter provider with a reader)
// against a nil *Limiter; the difference is what telemetry adds.
//
//	go test -run '^$' -bench . -count 6 ./internal/metrics/ | benchstat -

// nilLimiter is a package variable so the compiler cannot see it is nil.
var nilLimiter *Limiter

func sdkLimiter(b *testing.B) *Limiter {
	b.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	m := NewLimiter(mp, "bench", KindPerSecond)
	b.Cleanup(func() {
		// Collect once so the benchmark also proves the counts arrive.
		var rm metricdata.ResourceMetrics
		if err := r.Collect(context.Background(), &rm); err != nil {
			b.Error(err)
		}
		m.Close()
		_ = mp.Shutdown(context.Background())
	})
	return m
}

func BenchmarkAcquiredNil(b *testing.B) {
	m := nilLimiter
	for b.Loop() {
		m.Acquired()
	}
}

func BenchmarkAcquiredSDK(b *testing.B) {
	m := sdkLimiter(b)
	for b.Loop() {
		m.Acquired()
	}
}

// BenchmarkAcquiredNSDK is a lease of three permits: one atomic add.
func BenchmarkAcquiredNSDK(b *testing.B) {
	m := sdkLimiter(b)
	for b.Loop() {
		m.AcquiredN(3)
	}
}

func BenchmarkAcquiredNilParallel(b *testing.B) {
	m := nilLimiter
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Acquired()
		}
	})
}

func BenchmarkAcquiredSDKParallel(b *testing.B) {
	m := sdkLimiter(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Acquired()
		}
	})
}

func BenchmarkDeniedNil(b *testing.B) {
	m := nilLimiter
	for b.Loop() {
		m.Denied(telemetry.ReasonNoPermit)
	}
}

func BenchmarkDeniedSDK(b *testing.B) {
	m := sdkLimiter(b)
	for b.Loop() {
		m.Denied(telemetry.ReasonNoPermit)
	}
}

func BenchmarkDeniedSDKParallel(b *testing.B) {
	m := sdkLimiter(b)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.Denied(telemetry.ReasonNoPermit)
		}
	})
}

// BenchmarkSharedAtomicParallel is the reference: one counter word that
// every goroutine adds to, which is what the stripes avoid.
func BenchmarkSharedAtomicParallel(b *testing.B) {
	var n atomic.Int64
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			n.Add(1)
		}
	})
}

// BenchmarkWaitedSDK is the slow path: a histogram record, no allocation.
func BenchmarkWaitedSDK(b *testing.B) {
	m := sdkLimiter(b)
	b.ReportAllocs()
	for b.Loop() {
		m.Waited(context.Background(), 3*time.Millisecond)
	}
}
