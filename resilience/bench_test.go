package resilience

import (
	"context"
	"testing"
	"time"
)

var sink int

//go:noinline
func work(ctx context.Context) (int, error) { return 1, nil }

// BenchmarkDirect is the baseline: fn called directly.
func BenchmarkDirect(b *testing.B) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		v, _ := work(ctx)
		sink += v
	}
}

// benchRun measures Run whose first attempt succeeds.
func benchRun(b *testing.B, p *Policy, err error, ctx context.Context) {
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		v, _ := Run(ctx, p, work)
		sink += v
	}
}

// BenchmarkRun/retry: retries only (the shape of failsafe-go's retry policy).
// BenchmarkRun/default: Default(Options{}), with breaker and budget.
// BenchmarkRun/http: HTTP(Options{}), with timeouts, breaker and budget.
// BenchmarkRun/http_deadline: HTTP(Options{}) under a caller deadline that already
// bounds the attempt, so no attempt context is needed.
func BenchmarkRun(b *testing.B) {
	b.Run("retry", func(b *testing.B) {
		p, err := bare(Options{Retries: 3})
		benchRun(b, p, err, context.Background())
	})
	b.Run("default", func(b *testing.B) {
		p, err := Default(Options{})
		benchRun(b, p, err, context.Background())
	})
	b.Run("http", func(b *testing.B) {
		p, err := HTTP(Options{})
		benchRun(b, p, err, context.Background())
	})
	b.Run("http_deadline", func(b *testing.B) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		p, err := HTTP(Options{})
		benchRun(b, p, err, ctx)
	})
}

// BenchmarkRunParallel is Default(Options{}) under parallel callers: the breaker and
// the budget are shared.
func BenchmarkRunParallel(b *testing.B) {
	p, err := Default(Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			_, _ = Run(ctx, p, work)
		}
	})
}
