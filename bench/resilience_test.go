package bench

import (
	"context"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go"
	"github.com/failsafe-go/failsafe-go/circuitbreaker"
	"github.com/failsafe-go/failsafe-go/retrypolicy"
	"github.com/failsafe-go/failsafe-go/timeout"

	"github.com/headroom-go/headroom/resilience"
)

// The runner against failsafe-go, on the path that matters most: the first
// attempt succeeds. Each benchmark has a sub-benchmark per library, so
//
//	benchstat -col /lib new.txt
//
// prints them side by side with the ratio.

var sink int

//go:noinline
func work() (int, error) { return 1, nil }

func workCtx(context.Context) (int, error) { return work() }

// BenchmarkRetrySuccess: a retry policy alone (3 retries, exponential
// backoff with jitter), and fn called directly for the baseline.
func BenchmarkRetrySuccess(b *testing.B) {
	ctx := context.Background()
	b.Run("lib=direct", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := workCtx(ctx)
			sink += v
		}
	})
	p, err := resilience.New(resilience.Options{Retries: 3, Backoff: resilience.DefaultBackoff,
		ThrottledBackoff: resilience.ThrottledBackoff, MaximumDelay: resilience.MaximumDelay})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("lib=headroom", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := resilience.Run(ctx, p, workCtx)
			sink += v
		}
	})
	rp := retrypolicy.NewBuilder[int]().WithMaxRetries(3).
		WithBackoff(500*time.Millisecond, time.Minute).WithJitterFactor(0.5).Build()
	exec := failsafe.With[int](rp).WithContext(ctx)
	b.Run("lib=failsafe", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := exec.Get(work)
			sink += v
		}
	})
}

// BenchmarkBreakerSuccess: retries with a failure-ratio circuit breaker
// (10 % of at least 100 calls in 30 s, open 5 s): headroom's Default(),
// which also holds a retry budget; failsafe's retry policy composed around
// its circuit breaker.
func BenchmarkBreakerSuccess(b *testing.B) {
	ctx := context.Background()
	p := resilience.Default()
	b.Run("lib=headroom", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := resilience.Run(ctx, p, workCtx)
			sink += v
		}
	})
	rp := retrypolicy.NewBuilder[int]().WithMaxRetries(3).
		WithBackoff(500*time.Millisecond, time.Minute).WithJitterFactor(0.5).Build()
	cb := circuitbreaker.NewBuilder[int]().
		WithFailureRateThreshold(0.1, 100, 30*time.Second).WithDelay(5 * time.Second).Build()
	exec := failsafe.With[int](rp, cb).WithContext(ctx)
	b.Run("lib=failsafe", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := exec.Get(work)
			sink += v
		}
	})
}

// BenchmarkHTTPSuccess: the full HTTP pipeline: total timeout, retries,
// breaker, attempt timeout.
func BenchmarkHTTPSuccess(b *testing.B) {
	ctx := context.Background()
	p := resilience.HTTP()
	b.Run("lib=headroom", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := resilience.Run(ctx, p, workCtx)
			sink += v
		}
	})
	total := timeout.New[int](30 * time.Second)
	rp := retrypolicy.NewBuilder[int]().WithMaxRetries(3).
		WithBackoff(2*time.Second, time.Minute).WithJitterFactor(0.25).Build()
	cb := circuitbreaker.NewBuilder[int]().
		WithFailureRateThreshold(0.1, 100, 30*time.Second).WithDelay(5 * time.Second).Build()
	attempt := timeout.New[int](10 * time.Second)
	exec := failsafe.With[int](total, rp, cb, attempt).WithContext(ctx)
	b.Run("lib=failsafe", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := exec.Get(work)
			sink += v
		}
	})
}
