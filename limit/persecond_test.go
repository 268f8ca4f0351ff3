package limit

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/telemetry"
)

// mustPerSecond builds a PerSecond limiter or fails the test.
func mustPerSecond(t *testing.T, rate float64, burst int, opts ...Option) Limiter {
	t.Helper()
	l, err := PerSecond(rate, burst, opts...)
	if err != nil {
		t.Fatalf("PerSecond(%v, %d): %v", rate, burst, err)
	}
	return l
}

// psWantRefusal checks that err is a *RateLimitedError with reason and
// retryAfter.
func psWantRefusal(t *testing.T, err error, reason string, retryAfter time.Duration) {
	t.Helper()
	var rl *RateLimitedError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) {
		t.Fatalf("err = %v; want a *RateLimitedError", err)
	}
	if rl.Reason != reason || rl.RetryAfter != retryAfter {
		t.Fatalf("refusal %q retry after %v; want %q retry after %v", rl.Reason, rl.RetryAfter, reason, retryAfter)
	}
}

func TestPerSecondGrantsBurstThenRefusesWithExactRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustPerSecond(t, 10, 2)
		ctx := context.Background()
		for i := range 2 {
			if _, err := l.Acquire(ctx); err != nil {
				t.Fatalf("acquire %d of a full bucket: %v", i+1, err)
			}
		}
		time.Sleep(30 * time.Millisecond)
		_, err := l.Acquire(ctx)
		psWantRefusal(t, err, telemetry.ReasonNoPermit, 70*time.Millisecond)
		var rl *RateLimitedError
		errors.As(err, &rl)
		if rl.Limiter != "per_second" {
			t.Errorf("refusal names %q, want the default name per_second", rl.Limiter)
		}
		time.Sleep(rl.RetryAfter)
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatalf("acquire after RetryAfter: %v", err)
		}
	})
}

// "100 a second" means at most 100 in any second: a burst of 0 means 1, and
// a full second from the start grants no more than the rate.
func TestPerSecondDefaultBurstIsSmooth(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustPerSecond(t, 100, 0)
		if got := l.(*perSecond).bucket.Burst(); got != 1 {
			t.Fatalf("burst %d, want 1", got)
		}
		ctx := context.Background()
		granted := 0
		for start := time.Now(); time.Since(start) < time.Second; time.Sleep(time.Millisecond) {
			for {
				lease, err := l.Acquire(ctx)
				if err != nil {
					break
				}
				lease.Release()
				granted++
			}
		}
		if granted != 100 {
			t.Fatalf("%d granted in the first second, want 100", granted)
		}
	})
}
func TestPerSecondCostErrors(t *testing.T) {
	l := mustPerSecond(t, 10, 3, WithName("api"))
	for _, cost := range []int{-1, 4, math.MaxInt} {
		_, err := l.AcquireN(context.Background(), cost)
		var ce *CostError
		if !errors.As(err, &ce) || !errors.Is(err, ErrCost) || ce.Cost != cost || ce.Capacity != 3 || ce.Limiter != "api" {
			t.Errorf("AcquireN(%d) = %v; want a *CostError for api, capacity 3", cost, err)
		}
	}
	if _, err := l.AcquireN(context.Background(), 3); err != nil {
		t.Fatalf("refused costs took permits: %v", err)
	}
}

func TestPerSecondCostZeroIsGrantedWhenEmpty(t *testing.T) {
	l := mustPerSecond(t, 1, 1)
	ctx := context.Background()
	if _, err := l.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	lease, err := l.AcquireN(ctx, 0)
	if err != nil || lease.Cost() != 0 {
		t.Fatalf("AcquireN(0) on an empty bucket = %+v, %v; want a lease of cost 0", lease, err)
	}
}

func TestPerSecondLeaseCarriesGrantTimeAndIsHeldUntilReleased(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustPerSecond(t, 100, 100, WithName("api"))
		if l.Name() != "api" {
			t.Fatalf("Name() = %q, want api", l.Name())
		}
		time.Sleep(1500 * time.Millisecond)
		lease, err := l.AcquireN(context.Background(), 2)
		if err != nil {
			t.Fatal(err)
		}
		// Held means "not yet released", for this shape as for every other.
		if lease.Granted() != 1500*time.Millisecond || lease.Cost() != 2 || !lease.Held() {
			t.Fatalf("lease granted %v cost %d held %v; want 1.5s, 2, true", lease.Granted(), lease.Cost(), lease.Held())
		}
		lease.Release()
		if lease.Held() {
			t.Fatal("Held after Release")
		}
		lease.Release()
		if _, err := l.AcquireN(context.Background(), 98); err != nil {
			t.Fatalf("releasing gave back or took permits: %v", err)
		}
		if _, err := l.Acquire(context.Background()); err == nil {
			t.Fatal("Release freed a permit")
		}
	})
}

// psArrive starts a caller of AcquireN in its own goroutine, lets it reach its
// place in the queue, and returns a channel with its psResult and the time
// (since start) it got it.
type psResult struct {
	err error
	at  time.Duration
}

func psArrive(ctx context.Context, l Limiter, cost int, start time.Time) <-chan psResult {
	c := make(chan psResult, 1)
	go func() {
		_, err := l.AcquireN(ctx, cost)
		c <- psResult{err, time.Since(start)}
	}()
	synctest.Wait()
	return c
}

func TestPerSecondQueueServesInArrivalOrderAtExactTimes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := mustPerSecond(t, 10, 2, WithQueueLimit(10))
		ctx := context.Background()
		l.AcquireN(ctx, 2)
		// Costs 1, 2, 1: due at 100ms, 300ms, 400ms.
		a, b, c := psArrive(ctx, l, 1, start), psArrive(ctx, l, 2, start), psArrive(ctx, l, 1, start)
		for i, want := range []struct {
			c  <-chan psResult
			at time.Duration
		}{{a, 100 * time.Millisecond}, {b, 300 * time.Millisecond}, {c, 400 * time.Millisecond}} {
			r := <-want.c
			if r.err != nil || r.at != want.at {
				t.Fatalf("waiter %d: %v at %v; want granted at %v", i, r.err, r.at, want.at)
			}
		}
	})
}

func TestPerSecondFastPathCannotOvertakeTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := mustPerSecond(t, 10, 1, WithQueueLimit(5))
		ctx := context.Background()
		l.Acquire(ctx)
		w := psArrive(ctx, l, 1, start) // due at 100ms
		time.Sleep(150 * time.Millisecond)
		synctest.Wait()
		if r := <-w; r.at != 100*time.Millisecond {
			t.Fatalf("waiter granted at %v, want 100ms", r.at)
		}
		// At 150ms the next permit is due at 200ms: a newcomer queues.
		n := psArrive(ctx, l, 1, start)
		select {
		case r := <-n:
			t.Fatalf("newcomer granted at %v before its turn", r.at)
		default:
		}
		if r := <-n; r.at != 200*time.Millisecond {
			t.Fatalf("newcomer granted at %v, want 200ms", r.at)
		}
	})
}

func TestPerSecondQueueFullRefusesWithRetryAfter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := mustPerSecond(t, 10, 1, WithQueueLimit(2))
		ctx := context.Background()
		l.Acquire(ctx)
		a, b := psArrive(ctx, l, 1, start), psArrive(ctx, l, 1, start)
		_, err := l.Acquire(ctx)
		// Its permit would have been due at 300ms, behind the two queued.
		psWantRefusal(t, err, telemetry.ReasonQueueFull, 300*time.Millisecond)
		if time.Since(start) != 0 {
			t.Fatal("a refusal waited")
		}
		<-a
		// At 100ms the first waiter has left: room for one again.
		c := psArrive(ctx, l, 1, start)
		for i, ch := range []<-chan psResult{b, c} {
			if r := <-ch; r.err != nil || r.at != time.Duration(i+2)*100*time.Millisecond {
				t.Fatalf("waiter %d: %v at %v", i, r.err, r.at)
			}
		}
		// A cost above QueueLimit never waits: it is granted at once or refused.
		if _, err := l.AcquireN(ctx, 3); !errors.As(err, new(*CostError)) {
			t.Fatalf("cost above burst: %v", err)
		}
	})
}

func TestPerSecondRefusesAtOnceWhenTheDeadlineComesFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := mustPerSecond(t, 10, 1, WithQueueLimit(10))
		l.Acquire(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
		defer cancel()
		a := psArrive(ctx, l, 1, start) // due at 100ms: inside the deadline
		_, err := l.Acquire(ctx)        // due at 200ms: after it
		psWantRefusal(t, err, telemetry.ReasonDeadline, 200*time.Millisecond)
		if time.Since(start) != 0 {
			t.Fatal("the deadline refusal waited")
		}
		if r := <-a; r.err != nil || r.at != 100*time.Millisecond {
			t.Fatalf("waiter inside the deadline: %v at %v", r.err, r.at)
		}
		// Nothing was booked for the refused caller: the next slot is 200ms.
		if r := <-psArrive(context.Background(), l, 1, start); r.at != 200*time.Millisecond {
			t.Fatalf("next caller granted at %v, want 200ms", r.at)
		}
	})
}

func TestPerSecondDeadlineAtTheReadyTimeIsGranted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := mustPerSecond(t, 10, 1, WithQueueLimit(1))
		l.Acquire(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		if r := <-psArrive(ctx, l, 1, start); r.err != nil || r.at != 100*time.Millisecond {
			t.Fatalf("deadline == ready time: %v at %v; want granted at 100ms", r.err, r.at)
		}
	})
}

func TestPerSecondCancelledWaiterLeaksNoPermitAndLaterWaitersMoveUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := mustPerSecond(t, 10, 1, WithQueueLimit(10))
		bg := context.Background()
		l.Acquire(bg)
		ctx, cancel := context.WithCancel(bg)
		a := psArrive(bg, l, 1, start)  // 100ms
		b := psArrive(ctx, l, 2, start) // burst 1 cannot hold 2
		if r := <-b; !errors.Is(r.err, ErrCost) {
			t.Fatalf("cost 2 with burst 1: %v", r.err)
		}
		b = psArrive(ctx, l, 1, start) // 200ms
		c := psArrive(bg, l, 1, start) // 300ms, then 200ms once b leaves
		time.Sleep(50 * time.Millisecond)
		cancel()
		if r := <-b; !errors.Is(r.err, context.Canceled) || r.at != 50*time.Millisecond {
			t.Fatalf("cancelled waiter: %v at %v; want context.Canceled at 50ms", r.err, r.at)
		}
		for i, want := range []struct {
			c  <-chan psResult
			at time.Duration
		}{{a, 100 * time.Millisecond}, {c, 200 * time.Millisecond}} {
			if r := <-want.c; r.err != nil || r.at != want.at {
				t.Fatalf("waiter %d: %v at %v; want granted at %v", i, r.err, r.at, want.at)
			}
		}
		// b's permit went back: the next caller is due at 300ms, not 400ms.
		if r := <-psArrive(bg, l, 1, start); r.at != 300*time.Millisecond {
			t.Fatalf("next caller granted at %v, want 300ms", r.at)
		}
		ps := l.(*perSecond)
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if ps.queue.queued != 0 || ps.queue.front() != nil {
			t.Fatalf("queue not empty after every waiter left: %d permits", ps.queue.queued)
		}
	})
}

func TestPerSecondManyWaitersCancellingAtRandomLeakNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := mustPerSecond(t, 100, 1, WithQueueLimit(1000))
		l.Acquire(context.Background())
		var mu sync.Mutex
		var granted []time.Duration
		var wg sync.WaitGroup
		for i := range 40 {
			ctx, cancel := context.WithCancel(context.Background())
			if i%3 == 1 { // every third gives up while it waits
				time.AfterFunc(time.Duration(i)*time.Millisecond, cancel)
			}
			wg.Go(func() {
				defer cancel()
				lease, err := l.Acquire(ctx)
				if err == nil {
					mu.Lock()
					granted = append(granted, lease.Granted())
					mu.Unlock()
				}
			})
			synctest.Wait()
		}
		wg.Wait()
		// Every grant after the first takes the next 10ms slot: no gap
		// where a cancelled waiter's permit was lost, no two in one slot.
		if len(granted) != 40-13 {
			t.Fatalf("%d granted, want the 27 that did not give up", len(granted))
		}
		for i, at := range granted {
			if want := time.Duration(i+1) * 10 * time.Millisecond; at != want {
				t.Fatalf("grant %d at %v, want %v (all: %v)", i, at, want, granted)
			}
		}
	})
}

// A bucket that would take more than about 36 years to refill is refused
// when built, naming the setting at fault. Before, the engine shortened the
// interval to fit and so granted faster than asked: 0.5 a second with a
// burst of 1e9 refilled at 0.87 a second.
func TestPerSecondRefusesABucketTooSlowToRefill(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		burst int
		field string
	}{
		{0.5, 1e9, "Burst"},
		{1e-12, 1, "PermitsPerSecond"},
	} {
		_, err := PerSecond(c.rate, c.burst)
		var ce *headroom.ConfigError
		if !errors.As(err, &ce) || !errors.Is(err, headroom.ErrConfig) || ce.Package != "limit" || ce.Field != c.field {
			t.Errorf("PerSecond(%v): %v; want a limit ConfigError on %s", c.rate, err, c.field)
		}
	}
	_, err := ParseOptions([]byte(`{"permitsPerSecond": 0.5, "burst": 1000000000}`))
	var ce *headroom.ConfigError
	if !errors.As(err, &ce) || ce.Field != "burst" {
		t.Errorf("ParseOptions: %v; want a ConfigError on burst", err)
	}
	// The longest bucket that can be counted still builds.
	if _, err := PerSecond(0.5, 5e8); err != nil {
		t.Errorf("PerSecond(0.5, 5e8): %v", err)
	}
}
