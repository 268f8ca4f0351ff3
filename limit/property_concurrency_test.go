package limit

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
)

// TestPropertyConcurrencyNeverAboveLimit has 8 goroutines acquire random
// costs through the Concurrency limiter, queueing, and counts what is held
// with a counter of its own.
func TestPropertyConcurrencyNeverAboveLimit(t *testing.T) {
	const limit = 6
	l, err := Concurrency(limit, WithQueueLimit(100))
	if err != nil {
		t.Fatal(err)
	}
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range uint64(8) {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(g, 99))
			for range 3000 {
				cost := rng.IntN(limit + 1)
				ctx, cancel := context.WithCancel(context.Background())
				if rng.IntN(10) == 0 {
					cancel() // some leave the queue at once
				}
				lease, err := l.AcquireN(ctx, cost)
				cancel()
				if err != nil {
					continue
				}
				n := held.Add(int64(cost))
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				held.Add(-int64(cost))
				lease.Release()
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Fatalf("peak held %d; want at most %d", p, limit)
	}
	if n := l.(*bulkhead).engine.InFlight(); n != 0 {
		t.Fatalf("in flight after every release = %d; want 0 (a permit leaked)", n)
	}
	if peak.Load() < limit {
		t.Fatalf("peak held %d; want the whole limit %d used at some point", peak.Load(), limit)
	}
}
