package fleet

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// Callers that queue are served in the order they came, each when its
// permit is due by the bucket's exact RetryAfter.
func TestQueueServesInOrderAtExactTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 1}
		l := fakeLimiter(b, 1, Options{Name: "q", QueueLimit: new(10)})
		start := time.Now()
		var mu sync.Mutex
		var got []string
		var wg sync.WaitGroup
		for i := range 4 {
			wg.Go(func() {
				lease, err := l.Acquire(context.Background())
				if err != nil {
					t.Error(err)
					return
				}
				defer lease.Release()
				mu.Lock()
				got = append(got, time.Since(start).String()+" #"+string(rune('0'+i)))
				mu.Unlock()
			})
			synctest.Wait() // each caller queues before the next comes
		}
		wg.Wait()
		want := []string{"0s #0", "100ms #1", "200ms #2", "300ms #3"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("grants (-want +got):\n%s", diff)
		}
	})
}

// Without a queue a refusal comes at once, with the exact RetryAfter.
func TestNoQueueRefusesWithRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 2}
		l := fakeLimiter(b, 2, Options{Name: "nq"})
		ctx := context.Background()
		if _, err := l.AcquireN(ctx, 2); err != nil {
			t.Fatal(err)
		}
		time.Sleep(30 * time.Millisecond)
		_, err := l.Acquire(ctx)
		var rl *limit.RateLimitedError
		if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonNoPermit || rl.RetryAfter != 70*time.Millisecond {
			t.Errorf("err = %v, want a no_permit refusal with RetryAfter 70ms", err)
		}
	})
}

// A wait that would outlast the caller's deadline is refused at once, as a
// deadline refusal that also matches context.DeadlineExceeded.
func TestWaitPastDeadlineRefusedAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 1}
		l := fakeLimiter(b, 1, Options{Name: "dl", QueueLimit: new(5)})
		l.Acquire(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := l.Acquire(ctx)
		var rl *limit.RateLimitedError
		if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("err = %v, want a deadline refusal matching context.DeadlineExceeded", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("refused after %v, want at once", d)
		}
		if !l.q.empty() {
			t.Error("the refused caller is still queued")
		}
	})
}

// A waiter whose context is cancelled leaves the queue; the one behind it
// is served when its permit is due, not later.
func TestCancelledWaiterLeavesQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 1}
		l := fakeLimiter(b, 1, Options{Name: "c", QueueLimit: new(5)})
		l.Acquire(context.Background())
		start := time.Now()
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() { _, err := l.Acquire(ctx); errc <- err }()
		synctest.Wait()
		done := make(chan time.Duration, 1)
		go func() {
			if _, err := l.Acquire(context.Background()); err != nil {
				t.Error(err)
			}
			done <- time.Since(start)
		}()
		synctest.Wait()
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled waiter: %v, want context.Canceled", err)
		}
		if d := <-done; d != 100*time.Millisecond {
			t.Errorf("the next waiter was served at %v, want 100ms", d)
		}
	})
}

// A cost of 0 is granted without a round trip; one above the limit's
// capacity, or below 0, is a *limit.CostError.
func TestCosts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: time.Millisecond, burst: 5}
		l := fakeLimiter(b, 5, Options{Name: "cost"})
		ctx := context.Background()
		if lease, err := l.AcquireN(ctx, 0); err != nil || lease.Cost() != 0 || b.calls.Load() != 0 {
			t.Errorf("cost 0: %v, %d round trips", err, b.calls.Load())
		}
		for _, cost := range []int{-1, 6} {
			if _, err := l.AcquireN(ctx, cost); !errors.Is(err, limit.ErrCost) {
				t.Errorf("cost %d: %v, want a CostError", cost, err)
			}
		}
		if lease, err := l.AcquireN(ctx, 5); err != nil || lease.Cost() != 5 {
			t.Errorf("cost 5: %v, cost %d", err, lease.Cost())
		}
	})
}

// 64 callers of one process need a small fraction of a round trip each:
// those that come while one is out share the next. Without Batch the next
// asks for exactly what they want, and nothing is left over; with it, at
// least Batch, and less than Batch is left.
func TestConcurrentCallersShareRoundTrips(t *testing.T) {
	for _, batch := range []int{0, 16} {
		synctest.Test(t, func(t *testing.T) {
			b := &fakeBucket{interval: time.Microsecond, burst: 1000, rtt: time.Millisecond}
			l := fakeLimiter(b, 1000, Options{Name: "batch", Batch: batch})
			var wg sync.WaitGroup
			for range 64 {
				wg.Go(func() {
					for range 50 {
						if _, err := l.Acquire(context.Background()); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			const admitted = 64 * 50
			if r := float64(b.calls.Load()) / admitted; r > 0.1 {
				t.Errorf("batch %d: %d round trips for %d acquires (%.3f each), want at most 0.1", batch, b.calls.Load(), admitted, r)
			}
			if l.pocket > max(batch-1, 0) {
				t.Errorf("batch %d: %d permits left in the pocket", batch, l.pocket)
			}
		})
	}
}

// One caller at a time with batching on takes exactly its own permits:
// nothing is pocketed when demand is low.
func TestBatchingIdleTakesOnlyItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: time.Millisecond, burst: 100, rtt: time.Millisecond}
		l := fakeLimiter(b, 100, Options{Name: "idle", Batch: 16})
		for range 10 {
			if _, err := l.AcquireN(context.Background(), 2); err != nil {
				t.Fatal(err)
			}
		}
		if n := b.calls.Load(); n != 10 || l.pocket != 0 {
			t.Errorf("%d round trips, %d pocketed; want 10 and 0", n, l.pocket)
		}
	})
}

// A call whose context has ended takes nothing, whatever the cost and even
// with permits in the pocket or free on Redis, which it does not ask: a
// cancellation returns ctx.Err(), a deadline a refusal (ReasonDeadline), as
// every limiter of the module does.
func TestEndedContextTakesNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 2}
		l := fakeLimiter(b, 2, Options{Name: "ended"})
		l.pocket = 1
		cancelled, cancel := context.WithCancel(context.Background())
		cancel()
		expired, cancel2 := context.WithDeadline(context.Background(), time.Now())
		defer cancel2()
		for _, cost := range []int{1, 0} {
			if _, err := l.AcquireN(cancelled, cost); err != context.Canceled {
				t.Errorf("cost %d with a cancelled context: %v; want context.Canceled", cost, err)
			}
			var rl *limit.RateLimitedError
			if _, err := l.AcquireN(expired, cost); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("cost %d with an expired context: %v; want a deadline refusal", cost, err)
			}
		}
		if l.pocket != 1 || b.calls.Load() != 0 {
			t.Fatalf("ended contexts took from the pocket (%d left) or asked Redis (%d calls)", l.pocket, b.calls.Load())
		}
		for range 3 {
			lease, err := l.Acquire(context.Background())
			if err != nil {
				t.Fatalf("the permits the ended contexts left: %v", err)
			}
			lease.Release()
		}
	})
}
