package limit

import (
	"context"
	"testing"
)

// BenchmarkAdaptiveAcquireRelease is Acquire+Release with the sampling
// (two monotonic clock reads, the round and the baseline), serial.
func BenchmarkAdaptiveAcquireRelease(b *testing.B) {
	l, _ := Adaptive(0)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		lease, err := l.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		lease.Release()
	}
}

func BenchmarkAdaptiveAcquireReleaseParallel(b *testing.B) {
	l, _ := Adaptive(0)
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if lease, err := l.Acquire(ctx); err == nil {
				lease.Release()
			}
		}
	})
}
