package limit

import (
	"context"
	"testing"
)

// benchAcquireRelease is the Acquire+Release loop every shape's benchmark
// shares, through the Limiter interface as callers use it.
func benchAcquireRelease(b *testing.B, l Limiter) {
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

func benchAcquireReleaseParallel(b *testing.B, l Limiter) {
	ctx := context.Background()
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			lease, err := l.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			lease.Release()
		}
	})
}
