package limit

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/headroom-go/headroom/limit/concurrency"
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

// TestPropertyBulkheadEngineUnderChangingLimit races acquirers with
// SetLimit: what is held never exceeds the largest limit set, and nothing
// leaks.
func TestPropertyBulkheadEngineUnderChangingLimit(t *testing.T) {
	b, err := concurrency.New(4)
	if err != nil {
		t.Fatal(err)
	}
	var held, peak atomic.Int64
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Go(func() {
		rng := rand.New(rand.NewPCG(5, 5))
		for !stop.Load() {
			b.SetLimit(1 + rng.IntN(8))
		}
	})
	var workers sync.WaitGroup
	for g := range uint64(8) {
		workers.Go(func() {
			rng := rand.New(rand.NewPCG(g, 1))
			for range 20000 {
				cost := 1 + rng.IntN(3)
				if ok, _ := b.TryAcquire(0, cost); !ok {
					continue
				}
				n := held.Add(int64(cost))
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				held.Add(-int64(cost))
				b.Release(cost)
			}
		})
	}
	workers.Wait()
	stop.Store(true)
	wg.Wait()
	if p := peak.Load(); p > 8 {
		t.Fatalf("peak held %d; want at most 8, the largest limit set", p)
	}
	if b.InFlight() != 0 {
		t.Fatalf("in flight after every release = %d; want 0", b.InFlight())
	}
}
