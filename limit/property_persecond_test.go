package limit

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom/limit/window"
)

// admission is cost permits that became usable at time at.
type admission struct {
	at   time.Duration
	cost int
}

// overAdmission returns an error unless, over every interval [s, e] of the
// admissions' times, the permits admitted are at most (e-s)/interval+burst —
// which is at most rate·(e-s)+burst, since interval ≥ 1/rate. It checks all
// O(n²) intervals in O(n): with P the prefix sums of cost in time order, the
// bound for admissions i..j reads (P[j+1]·interval - t[j]) - (P[i]·interval -
// t[i]) ≤ burst·interval, so it is enough to keep the least P[i]·interval -
// t[i] seen so far.
func overAdmission(adm []admission, interval time.Duration, burst int) error {
	slices.SortFunc(adm, func(a, b admission) int { return int(a.at - b.at) })
	span := int64(burst) * int64(interval)
	var prefix int64 // permits admitted before index j
	least := int64(0)
	for j, a := range adm {
		if v := prefix*int64(interval) - int64(a.at); j == 0 || v < least {
			least = v
		}
		prefix += int64(a.cost)
		if excess := prefix*int64(interval) - int64(a.at) - least - span; excess > 0 {
			return fmt.Errorf("over-admission: an interval ending at %v holds %v more than d/interval + burst allows", a.at, time.Duration(excess))
		}
	}
	return nil
}

// TestPerSecondPropertyCheckerCatchesOverAdmission makes sure the property
// tests below could fail.
func TestPerSecondPropertyCheckerCatchesOverAdmission(t *testing.T) {
	const iv = time.Millisecond
	steady := []admission{{0, 2}, {0, 1}, {iv, 1}, {2 * iv, 1}, {5 * iv, 3}, {6 * iv, 1}}
	if err := overAdmission(slices.Clone(steady), iv, 3); err != nil {
		t.Fatalf("a conforming sequence: %v", err)
	}
	for name, adm := range map[string][]admission{
		"burst+1 at once":     {{0, 3}, {0, 1}},
		"one a hair early":    append(slices.Clone(steady), admission{7*iv - 1, 1}),
		"refill past burst":   {{0, 3}, {10 * iv, 3}, {10 * iv, 1}},
		"late, in the middle": {{0, 3}, {iv, 1}, {3 * iv, 2}, {3*iv + iv/2, 1}},
	} {
		if err := overAdmission(adm, iv, 3); err == nil {
			t.Errorf("%s: not caught", name)
		}
	}
}

// admittedBy sums the permits admitted at or before end.
func admittedBy(adm []admission, end time.Duration) int {
	n := 0
	for _, a := range adm {
		if a.at <= end {
			n += a.cost
		}
	}
	return n
}

// TestPerSecondPropertyCore hammers the time-explicit bucket from 8
// goroutines sharing a clock that each of them moves forward by a random
// step. Some take, some reserve ahead (their permits count when due).
func TestPerSecondPropertyCore(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		burst int
	}{{1000, 5}, {3000.0 / 7, 5}, {50, 10}} {
		const goroutines, ops = 8, 20000
		b, err := window.NewTokenBucket(c.rate, c.burst)
		if err != nil {
			t.Fatal(err)
		}
		var clock atomic.Int64
		step := int64(b.Interval() / 1000) // demand far above the rate
		results := make([][]admission, goroutines)
		var wg sync.WaitGroup
		for g := range goroutines {
			rng := rand.New(rand.NewPCG(uint64(g), 7))
			wg.Go(func() {
				for range ops {
					now := time.Duration(clock.Add(rng.Int64N(step + 1)))
					cost := 1 + rng.IntN(3)
					if g%2 == 0 {
						if ok, _ := b.TryAcquire(now, cost); ok {
							results[g] = append(results[g], admission{now, cost})
						}
						continue
					}
					maxAhead := time.Duration(rng.Int64N(int64(4 * b.Interval())))
					if at, ok := b.Reserve(now, cost, maxAhead); ok {
						results[g] = append(results[g], admission{at, cost})
					}
				}
			})
		}
		wg.Wait()
		all := slices.Concat(results...)
		t.Logf("rate %v: admitted %d by %v, rate·d = %.1f", c.rate, admittedBy(all, time.Duration(clock.Load())), time.Duration(clock.Load()), c.rate*time.Duration(clock.Load()).Seconds())
		if err := overAdmission(all, b.Interval(), c.burst); err != nil {
			t.Fatalf("rate %v: %v", c.rate, err)
		}
		end := time.Duration(clock.Load())
		if got, want := float64(admittedBy(all, end)), c.rate*end.Seconds(); got < want {
			t.Errorf("rate %v: admitted %v permits in %v, below the configured rate (%v)", c.rate, got, end, want)
		}
	}
}

// TestPerSecondPropertyShell runs the same property through the limiter in a
// synctest bubble: 8 callers asking for random costs, some with contexts
// that end while they wait in the queue, each coming back after RetryAfter
// (or sooner) when refused.
func TestPerSecondPropertyShell(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const rate, burst, run = 200, 4, 2 * time.Second
		l := mustPerSecond(t, rate, burst, WithQueueLimit(6))
		interval := l.(*perSecond).bucket.Interval()
		start := time.Now()
		var mu sync.Mutex
		var all []admission
		var cancelled, waited atomic.Int64
		var wg sync.WaitGroup
		for g := range 8 {
			rng := rand.New(rand.NewPCG(uint64(g), 11))
			wg.Go(func() {
				for time.Since(start) < run {
					cost := 1 + rng.IntN(3)
					ctx, cancel := context.WithCancel(context.Background())
					if rng.IntN(4) == 0 {
						time.AfterFunc(time.Duration(rng.Int64N(int64(20*time.Millisecond))), cancel)
					}
					before := time.Since(start)
					lease, err := l.AcquireN(ctx, cost)
					cancel()
					var rl *RateLimitedError
					switch {
					case err == nil:
						if lease.Granted() > before {
							waited.Add(1)
						}
						mu.Lock()
						all = append(all, admission{lease.Granted(), cost})
						mu.Unlock()
					case errors.As(err, &rl):
						time.Sleep(time.Duration(rng.Int64N(int64(rl.RetryAfter) + 1)))
					case errors.Is(err, context.Canceled):
						cancelled.Add(1)
					default:
						t.Errorf("AcquireN(%d): %v", cost, err)
						return
					}
				}
			})
		}
		wg.Wait()
		if cancelled.Load() == 0 || waited.Load() == 0 {
			t.Fatalf("the run exercised too little: %d waits, %d cancellations", waited.Load(), cancelled.Load())
		}
		t.Logf("admitted %d (%d grants), %d waits, %d cancellations", admittedBy(all, run), len(all), waited.Load(), cancelled.Load())
		if err := overAdmission(all, interval, burst); err != nil {
			t.Fatal(err)
		}
		if got, want := admittedBy(all, run), int(rate*run.Seconds()); got < want {
			t.Errorf("admitted %d permits in %v, below the configured rate (%d)", got, run, want)
		}
	})
}
