package limit

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/telemetry"
)

func newWindowLimiter(t *testing.T, permits int, window time.Duration, opts ...Option) Limiter {
	t.Helper()
	l, err := PerWindow(permits, window, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// refusal checks that err is a *RateLimitedError with the given reason and
// RetryAfter.
func refusal(t *testing.T, err error, reason string, retryAfter time.Duration) {
	t.Helper()
	var rl *RateLimitedError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("error %v; want a *RateLimitedError", err)
	}
	if rl.Reason != reason || rl.RetryAfter != retryAfter {
		t.Fatalf("refused with reason %q, RetryAfter %v; want %q, %v", rl.Reason, rl.RetryAfter, reason, retryAfter)
	}
}

func TestPerWindowRefusesWithExactRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := t.Context()
		l := newWindowLimiter(t, 3, time.Minute, WithName("api"))
		if l.Name() != "api" {
			t.Fatalf("Name = %q; want api", l.Name())
		}
		if _, err := l.AcquireN(ctx, 2); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Second)
		lease, err := l.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if lease.Granted() != 20*time.Second || lease.Cost() != 1 || !lease.Held() {
			t.Fatalf("lease granted %v, cost %d, held %v; want 20s, 1, true", lease.Granted(), lease.Cost(), lease.Held())
		}
		lease.Release() // frees nothing: a window permit is spent when granted
		time.Sleep(10 * time.Second)
		_, err = l.Acquire(ctx)
		refusal(t, err, telemetry.ReasonNoPermit, 30*time.Second) // the first two leave at 1m
		_, err = l.AcquireN(ctx, 3)
		refusal(t, err, telemetry.ReasonNoPermit, 50*time.Second) // all three only at 1m20s
		time.Sleep(30 * time.Second)
		if _, err := l.AcquireN(ctx, 2); err != nil {
			t.Fatalf("at 1m: %v; want two permits free", err)
		}
	})
}

func TestPerWindowCost(t *testing.T) {
	l := newWindowLimiter(t, 2, time.Second, WithName("w"))
	for _, cost := range []int{3, -1} {
		_, err := l.AcquireN(t.Context(), cost)
		var ce *CostError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCost) || ce.Capacity != 2 || ce.Cost != cost || ce.Limiter != "w" {
			t.Fatalf("AcquireN(%d) error %#v; want a *CostError with capacity 2", cost, err)
		}
	}
	if _, err := l.AcquireN(t.Context(), 2); err != nil {
		t.Fatal(err)
	}
	if lease, err := l.AcquireN(t.Context(), 0); err != nil || lease.Held() {
		t.Fatalf("AcquireN(0) on a full window = %v, held %v; want granted, holding nothing", err, lease.Held())
	}
}

func TestPerWindowDefaultName(t *testing.T) {
	if n := newWindowLimiter(t, 1, time.Second).Name(); n != "per_window" {
		t.Fatalf("default name %q; want per_window", n)
	}
}

// A window of math.MaxInt64, which Validate accepts, grants its permits once
// and never again (the engine's arithmetic saturates), queued or not.
func TestPerWindowHugeWindowGrantsOnlyItsPermits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		forever := time.Duration(math.MaxInt64)
		l := newWindowLimiter(t, 1, forever)
		q := newWindowLimiter(t, 1, forever, WithQueueLimit(1))
		time.Sleep(time.Second) // limiters that have been up for a while
		for _, l := range []Limiter{l, q} {
			if _, err := l.Acquire(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		for range 5 {
			time.Sleep(time.Hour)
			if _, err := l.Acquire(t.Context()); !errors.Is(err, ErrRateLimited) {
				t.Fatalf("second permit of 1 per %v: %v; want a refusal", forever, err)
			}
		}
		ctx, cancel := context.WithTimeout(t.Context(), 1000*time.Hour)
		defer cancel()
		if _, err := q.Acquire(ctx); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("queued second permit of 1 per %v with a deadline: %v; want a deadline refusal", forever, err)
		}
	})
}

// result is what one waiting caller got, and when.
type result struct {
	id  int
	at  time.Duration
	err error
}

// startWaiters starts one Acquire per cost, in order, each queued before
// the next starts, and sends what each got.
func startWaiters(ctx context.Context, l Limiter, start time.Time, costs ...int) <-chan result {
	out := make(chan result, len(costs))
	for id, cost := range costs {
		go func() {
			_, err := l.AcquireN(ctx, cost)
			out <- result{id, time.Since(start), err}
		}()
		synctest.Wait() // queued, in this order
	}
	return out
}

// collect returns n results ordered by grant time, then by waiter: waiters
// granted at one instant wake in no fixed order.
func collect(out <-chan result, n int) []result {
	rs := make([]result, n)
	for i := range rs {
		rs[i] = <-out
	}
	slices.SortStableFunc(rs, func(a, b result) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.id, b.id))
	})
	return rs
}

func TestPerWindowQueueIsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l, err := New(Options{PerWindow: &WindowOptions{Permits: 2, Window: headroom.Duration(time.Second), Segments: 2}, QueueLimit: new(10)})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(600 * time.Millisecond)
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		// A needs both permits. One frees at 1s, but B, behind A, must not
		// take it: A gets both at 1.6s, B one at 2.6s, C the other.
		got := collect(startWaiters(t.Context(), l, start, 2, 1, 1), 3)
		want := []result{{0, 1600 * time.Millisecond, nil}, {1, 2600 * time.Millisecond, nil}, {2, 2600 * time.Millisecond, nil}}
		if len(got) != len(want) {
			t.Fatalf("got %v; want %v", got, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("grants %v; want %v", got, want)
			}
		}
	})
}

func TestPerWindowQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		l := newWindowLimiter(t, 2, time.Second, WithQueueLimit(2))
		if _, err := l.AcquireN(ctx, 2); err != nil {
			t.Fatal(err)
		}
		out := startWaiters(ctx, l, time.Now(), 2)
		_, err := l.Acquire(ctx)
		// Room for the queued two and this one: only once the window frees
		// all of it, which is a lower bound on when this caller would run.
		refusal(t, err, telemetry.ReasonQueueFull, time.Second)
		if r := <-out; r.err != nil || r.at != time.Second {
			t.Fatalf("queued caller got %v at %v; want a lease at 1s", r.err, r.at)
		}
	})
}

func TestPerWindowRefusesWhenTheDeadlineComesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newWindowLimiter(t, 1, time.Second, WithQueueLimit(5))
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		short, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := l.Acquire(short)
		refusal(t, err, telemetry.ReasonDeadline, time.Second)
		if waited := time.Since(start); waited != 0 {
			t.Fatalf("refused after %v; want at once", waited)
		}
		long, cancel2 := context.WithTimeout(t.Context(), 1500*time.Millisecond)
		defer cancel2()
		if lease, err := l.Acquire(long); err != nil || time.Since(start) != time.Second || lease.Granted() != time.Second {
			t.Fatalf("with time to spare: %v after %v; want a lease at 1s", err, time.Since(start))
		}
	})
}

func TestPerWindowCancelLeaksNoPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := newWindowLimiter(t, 2, time.Second, WithQueueLimit(10))
		if _, err := l.AcquireN(t.Context(), 2); err != nil {
			t.Fatal(err)
		}
		ctxA, cancelA := context.WithCancel(t.Context())
		outA := startWaiters(ctxA, l, start, 1)        // the front
		outB := startWaiters(t.Context(), l, start, 1) // behind it
		time.Sleep(500 * time.Millisecond)
		cancelA()
		if r := <-outA; !errors.Is(r.err, context.Canceled) || r.at != 500*time.Millisecond {
			t.Fatalf("cancelled waiter got %v at %v; want context.Canceled at 500ms", r.err, r.at)
		}
		// B became the front when A left, and takes its permit at 1s...
		if r := <-outB; r.err != nil || r.at != time.Second {
			t.Fatalf("second waiter got %v at %v; want a lease at 1s", r.err, r.at)
		}
		// ...and A took none: the other permit is still there.
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatalf("after the cancel: %v; want the permit A never took", err)
		}
	})
}

// TestPerWindowCancelAsTheWindowFrees ends the head waiter's context at the
// very instant its timer fires: it must return ctx.Err() and take nothing.
func TestPerWindowCancelAsTheWindowFrees(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newWindowLimiter(t, 1, time.Second, WithQueueLimit(1))
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		out := startWaiters(ctx, l, time.Now(), 1)
		pw := l.(*perWindow)
		time.Sleep(999 * time.Millisecond)
		pw.mu.Lock()
		time.Sleep(time.Millisecond) // the waiter's timer fires; it waits for mu
		cancel()
		pw.mu.Unlock()
		if r := <-out; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("waiter got %v; want context.Canceled", r.err)
		}
		if _, err := l.Acquire(t.Context()); err != nil {
			t.Fatalf("after the cancel: %v; want the permit the waiter never took", err)
		}
	})
}

func TestPerWindowQueuedCallersShareTheWindowExactly(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := newWindowLimiter(t, 3, time.Second, WithQueueLimit(100))
		var mu sync.Mutex
		var grants []time.Duration
		var wg sync.WaitGroup
		for range 12 {
			wg.Go(func() {
				lease, err := l.Acquire(t.Context())
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				grants = append(grants, lease.Granted())
				mu.Unlock()
				if time.Since(start) != lease.Granted() {
					t.Errorf("lease says %v, clock says %v", lease.Granted(), time.Since(start))
				}
			})
		}
		wg.Wait()
		if since := time.Since(start); since != 3*time.Second {
			t.Fatalf("12 permits at 3 a second took %v; want 3s", since)
		}
		per := map[time.Duration]int{}
		for _, g := range grants {
			per[g]++
		}
		for _, at := range []time.Duration{0, time.Second, 2 * time.Second, 3 * time.Second} {
			if per[at] != 3 {
				t.Fatalf("grants by time %v; want 3 at each of 0s, 1s, 2s, 3s", per)
			}
		}
	})
}

// A window shorter than its segments, the default 8 included, is refused
// when built, naming Segments, not accepted to fail on the first Acquire.
func TestPerWindowShorterThanItsSegmentsIsRefused(t *testing.T) {
	lim, err := PerWindow(10, 7*time.Nanosecond)
	var ce *headroom.ConfigError
	if lim != nil || !errors.As(err, &ce) || ce.Field != "PerWindow.Segments" {
		t.Fatalf("PerWindow(10, 7ns) = %v, %v; want nil and a ConfigError on PerWindow.Segments", lim, err)
	}
	_, err = ParseOptions([]byte(`{"perWindow": {"permits": 10, "window": "7ns"}}`))
	if !errors.As(err, &ce) || ce.Field != "perWindow.segments" || !strings.Contains(ce.Want, "at most 7") {
		t.Fatalf("ParseOptions of a 7ns window: %v; want a ConfigError on perWindow.segments asking for at most 7", err)
	}
	lim, err = PerWindow(10, 8*time.Nanosecond)
	if err != nil {
		t.Fatalf("PerWindow(10, 8ns): %v", err)
	}
	lease, err := lim.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	lease.Release()
}
