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
	// Default's 3 retries and 1 min cap, without its breaker and budget.
	p, err := resilience.Default(resilience.Options{NoBreaker: true, NoBudget: true})
	if err != nil {
		b.Fatal(err)
	}
	benchRunners(b, p, failsafe.With[int](failsafeRetry(500*time.Millisecond, 0.5)).WithContext(ctx))
}

// BenchmarkBreakerSuccess: retries with a failure-ratio circuit breaker
// (10 % of at least 100 calls in 30 s, open 5 s): headroom's Default(),
// which also holds a retry budget; failsafe's retry policy composed around
// its circuit breaker.
func BenchmarkBreakerSuccess(b *testing.B) {
	exec := failsafe.With[int](failsafeRetry(500*time.Millisecond, 0.5), failsafeBreaker()).
		WithContext(context.Background())
	p, err := resilience.Default(resilience.Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchRunners(b, p, exec)
}

// BenchmarkHTTPSuccess: the full HTTP pipeline: total timeout, retries,
// breaker, attempt timeout.
func BenchmarkHTTPSuccess(b *testing.B) {
	total := timeout.New[int](30 * time.Second)
	attempt := timeout.New[int](10 * time.Second)
	exec := failsafe.With[int](total, failsafeRetry(2*time.Second, 0.25), failsafeBreaker(), attempt).
		WithContext(context.Background())
	p, err := resilience.HTTP(resilience.Options{})
	if err != nil {
		b.Fatal(err)
	}
	benchRunners(b, p, exec)
}

// benchRunners runs the sub-benchmarks lib=headroom, a run of p, and
// lib=failsafe, a run of exec, both under context.Background().
func benchRunners(b *testing.B, p *resilience.Policy, exec failsafe.Executor[int]) {
	ctx := context.Background()
	b.Run("lib=headroom", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := resilience.Run(ctx, p, workCtx)
			sink += v
		}
	})
	b.Run("lib=failsafe", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, _ := exec.Get(work)
			sink += v
		}
	})
}

// failsafeRetry is failsafe's match of a headroom curve: 3 retries,
// exponential from initial up to a minute, with jitter.
func failsafeRetry(initial time.Duration, jitter float64) retrypolicy.RetryPolicy[int] {
	return retrypolicy.NewBuilder[int]().WithMaxRetries(3).
		WithBackoff(initial, time.Minute).WithJitterFactor(jitter).Build()
}

// failsafeBreaker is failsafe's match of Polly's default breaker, which
// headroom's presets use: 10 % of at least 100 calls in 30 s, open 5 s.
func failsafeBreaker() circuitbreaker.CircuitBreaker[int] {
	return circuitbreaker.NewBuilder[int]().
		WithFailureRateThreshold(0.1, 100, 30*time.Second).WithDelay(5 * time.Second).Build()
}
