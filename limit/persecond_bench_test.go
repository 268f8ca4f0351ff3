package limit

import (
	"context"
	"testing"
	"time"

	"github.com/headroom-go/headroom/limit/window"
)

// benchPerSecond is a limiter that always has permits: a billion a second
// with a billion of burst, so every call takes the fast path.
func benchPerSecond(b *testing.B) Limiter {
	l, err := PerSecond(1e9, 1e9)
	if err != nil {
		b.Fatal(err)
	}
	return l
}

func BenchmarkPerSecondAcquireRelease(b *testing.B) { benchAcquireRelease(b, benchPerSecond(b)) }

func BenchmarkPerSecondAcquireReleaseParallel(b *testing.B) {
	benchAcquireReleaseParallel(b, benchPerSecond(b))
}

// BenchmarkPerSecondRefused is the cost of a refusal with QueueLimit 0: it
// allocates the *RateLimitedError.
func BenchmarkPerSecondRefused(b *testing.B) {
	l, _ := PerSecond(1e-3, 1)
	ctx := context.Background()
	l.Acquire(ctx)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := l.Acquire(ctx); err == nil {
			b.Fatal("granted")
		}
	}
}

// BenchmarkTokenBucketTryAcquire is the core alone, on a fixed time.
func BenchmarkTokenBucketTryAcquire(b *testing.B) {
	tb, err := window.NewTokenBucket(1e9, 1e9)
	if err != nil {
		b.Fatal(err)
	}
	var now time.Duration
	for b.Loop() {
		now++
		tb.TryAcquire(now, 1)
	}
}
