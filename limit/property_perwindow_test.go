package limit

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-go/headroom/limit/concurrency"
	"github.com/headroom-go/headroom/limit/window"
)

// windowGrant is one admission, at the time the engine counted it.
type windowGrant struct {
	at   time.Duration
	cost int
}

// TestPropertyWindowStrictUnderConcurrency has 8 goroutines take random
// costs from one engine on a shared random clock that only moves forward.
// Over every interval of length Window at most Permits are granted, and,
// demand being far above the quota, at least the documented utilisation
// floor is reached.
func TestPropertyWindowStrictUnderConcurrency(t *testing.T) {
	for seed := range uint64(4) {
		const permits, win, segments = 50, 100 * time.Millisecond, 8
		engine, err := window.NewSlidingWindow(permits, win, segments)
		if err != nil {
			t.Fatal(err)
		}
		var clock atomic.Int64
		const horizon = 200 * win
		var mu sync.Mutex
		var grants []windowGrant
		var wg sync.WaitGroup
		for g := range uint64(8) {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(seed, g))
				var mine []windowGrant
				for {
					now := time.Duration(clock.Add(rng.Int64N(int64(200 * time.Microsecond))))
					if now >= horizon {
						break
					}
					cost := rng.IntN(5)
					if ok, at, _ := engine.TryAcquire(now, cost); ok && cost > 0 {
						if at < now {
							t.Errorf("counted at %v, before the caller's now %v", at, now)
						}
						mine = append(mine, windowGrant{at, cost})
					}
				}
				mu.Lock()
				grants = append(grants, mine...)
				mu.Unlock()
			})
		}
		wg.Wait()

		slices.SortFunc(grants, func(a, b windowGrant) int { return int(a.at - b.at) })
		most, sum, j, total := 0, 0, 0, 0
		for i, g := range grants {
			for j < len(grants) && grants[j].at < g.at+win {
				sum += grants[j].cost
				j++
			}
			most = max(most, sum)
			sum -= grants[i].cost
			total += g.cost
		}
		if most > permits {
			t.Errorf("seed %d: %d permits in one window of %v; want at most %d", seed, most, win, permits)
		}
		floor := float64(permits) * float64(horizon/win) * segments / (segments + 1)
		if float64(total) < floor {
			t.Errorf("seed %d: %d granted over %v; want at least %.0f under saturation", seed, total, horizon, floor)
		}
	}
}

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
				if !b.TryAcquire(cost) {
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
