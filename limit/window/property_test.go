package window

import (
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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
		engine, err := NewSlidingWindow(permits, win, segments)
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
					if ok, at, _ := engine.take(now, cost); ok && cost > 0 {
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
