package fleet

import (
	"context"
	"testing"
	"time"
)

// BenchmarkAcquireRedis is one goroutine acquiring from a PerSecond that
// never refuses, on the test server: a round trip each, and what it
// allocates (-benchmem).
func BenchmarkAcquireRedis(b *testing.B) {
	c, prefix := testRedis(b)
	lim, err := PerSecond(c, 1e6, 1e6, Options{Name: "bench", Prefix: prefix, Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	lim.Acquire(ctx)
	b.ReportAllocs()
	for b.Loop() {
		lease, err := lim.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		lease.Release()
	}
}
