package limit

import (
	"context"
	"testing"
	"time"
)

// benchPerWindow always has room: a billion permits an hour, so every call
// takes the fast path.
func benchPerWindow(b *testing.B) Limiter {
	l, err := PerWindow(1e9, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// benchConcurrency has far more slots than callers.
func benchConcurrency(b *testing.B) Limiter {
	l, err := Concurrency(1 << 16) // the most a bulkhead holds: it never refuses here
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func BenchmarkPerWindowAcquireRelease(b *testing.B) { benchAcquireRelease(b, benchPerWindow(b)) }

func BenchmarkPerWindowAcquireReleaseParallel(b *testing.B) {
	benchAcquireReleaseParallel(b, benchPerWindow(b))
}

// BenchmarkPerWindowRefused is the cost of a refusal with QueueLimit 0: it
// allocates the *RateLimitedError.
func BenchmarkPerWindowRefused(b *testing.B) {
	l, _ := PerWindow(1, time.Hour)
	ctx := context.Background()
	l.Acquire(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Acquire(ctx); err == nil {
			b.Fatal("granted")
		}
	}
}

func BenchmarkConcurrencyAcquireRelease(b *testing.B) { benchAcquireRelease(b, benchConcurrency(b)) }

func BenchmarkConcurrencyAcquireReleaseParallel(b *testing.B) {
	benchAcquireReleaseParallel(b, benchConcurrency(b))
}

// BenchmarkChannelSemaphore is the baseline the bulkhead is measured
// against: a buffered channel used as a counting semaphore.
func BenchmarkChannelSemaphore(b *testing.B) {
	sem := make(chan struct{}, 1<<20)
	b.ReportAllocs()
	for b.Loop() {
		sem <- struct{}{}
		<-sem
	}
}

func BenchmarkChannelSemaphoreParallel(b *testing.B) {
	sem := make(chan struct{}, 1<<20)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			sem <- struct{}{}
			<-sem
		}
	})
}
