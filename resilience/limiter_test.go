package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"

	"github.com/headroom-go/headroom/limit"
)

// With the real limiters: the limiter goes inside the callback, one permit
// per attempt.

func TestRealConcurrencyLimiterRefusesThenAdmits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.Concurrency(1, limit.WithName("payments"))
		if err != nil {
			t.Fatal(err)
		}
		held, err := lim.Acquire(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		time.AfterFunc(7*time.Second, held.Release)
		p := must(HTTP(Options{ThrottledBackoff: headroom.Backoff{Initial: headroom.Duration(3 * time.Second), Multiplier: 1, Jitter: new(0.0)}, Timeout: headroom.Duration(time.Minute)}))
		r := Try(t.Context(), p, acquireOnce(lim))
		if r.Err != nil || r.Stop != StopSucceeded || len(r.Attempts) != 4 {
			t.Fatalf("stop %v after %d attempts: %v; want succeeded after 4", r.Stop, len(r.Attempts), r.Err)
		}
		for _, a := range r.Attempts[:3] {
			var rl *limit.RateLimitedError
			if !errors.As(a.Err, &rl) || !a.Verdict.SelfImposed || a.Verdict.Kind != Throttled {
				t.Errorf("refused attempt: %v, %v", a.Verdict, a.Err)
			}
		}
		if got := budgetTokens(p.budget); got != budgetScale {
			t.Errorf("budget tokens = %d; want one deposit, no withdrawal", got)
		}
		if ok, fail := breakerCounts(p.breaker); ok != 1 || fail != 0 || p.breaker.State() != Closed {
			t.Errorf("breaker %v saw %d successes, %d failures; want closed, 1, 0", p.breaker.State(), ok, fail)
		}
	})
}

func TestRealPerSecondHintWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.PerSecond(2, 1)
		if err != nil {
			t.Fatal(err)
		}
		p := must(HTTP(Options{}))
		fn := acquireOnce(lim)
		if _, err := Run(t.Context(), p, fn); err != nil {
			t.Fatal(err)
		}
		r := Try(t.Context(), p, fn)
		if r.Err != nil || len(r.Attempts) != 2 {
			t.Fatalf("%d attempts: %v", len(r.Attempts), r.Err)
		}
		// The token bucket's hint is exact: the next token in 500 ms.
		want := []attemptView{{Kind: Throttled, SelfImposed: true, RetryAfter: 500 * time.Millisecond, Delay: 500 * time.Millisecond}, {Kind: Success}}
		if d := cmp.Diff(want, views(r.Attempts)); d != "" {
			t.Errorf("attempts (-want +got):\n%s", d)
		}
	})
}

// An attempt that waits in our own limiter's queue until its AttemptTimeout
// never reached the dependency: a self-imposed throttle, so the breaker
// records nothing and the budget is not charged.
func TestQueueWaitPastAttemptTimeoutIsSelfImposed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.Concurrency(1, limit.WithQueueLimit(10), limit.WithName("local"))
		if err != nil {
			t.Fatal(err)
		}
		held, _ := lim.Acquire(t.Context())
		defer held.Release()
		br, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Minute})
		bu, _ := NewBudget(BudgetOptions{TTL: 10 * time.Second, MinRetriesPerSecond: new(0), Ratio: new(1.0)})
		p := must(HTTP(Options{Retries: 1, AttemptTimeout: headroom.Duration(time.Second), Timeout: headroom.Duration(time.Minute), Backoff: headroom.Backoff{Initial: headroom.Duration(time.Millisecond)}, Breaker: br, Budget: bu}))
		before := bu.balance(time.Now())
		r := Try(t.Context(), p, acquireOnce(lim))
		v := r.Attempts[0].Verdict
		if v.Kind != Throttled || !v.SelfImposed || br.State() != Closed || bu.balance(time.Now()) != before {
			t.Fatalf("a wait in our own queue: verdict %v, breaker %v, budget %d→%d, stop %v; "+
				"want throttled (self-imposed), breaker closed, budget untouched",
				v, br.State(), before, bu.balance(time.Now()), r.Stop)
		}
	})
}

// The README's first example: a PerSecond limiter with a queue, shared by
// a burst of goroutines that each call through HTTP(Options{}). Every call succeeds,
// admitted at the limiter's rate, and none is retried.
func TestREADMEBurstThroughQueuedLimiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.PerSecond(100, 100, limit.WithQueueLimit(1000))
		if err != nil {
			t.Fatal(err)
		}
		const callers = 400
		start := time.Now()
		errs := make(chan error, callers)
		attempts := make(chan int, callers)
		for range callers {
			go func() {
				r := Try(t.Context(), must(HTTP(Options{})), acquireOnce(lim))
				attempts <- len(r.Attempts)
				errs <- r.Err
			}()
		}
		for range callers {
			if err := <-errs; err != nil {
				t.Fatalf("a caller failed: %v", err)
			}
			if n := <-attempts; n != 1 {
				t.Fatalf("a caller took %d attempts, want 1", n)
			}
		}
		// 100 from the full bucket, then 100 a second.
		if took, want := time.Since(start), 3*time.Second; took != want {
			t.Fatalf("%d callers took %v, want %v", callers, took, want)
		}
	})
}

// Without a queue, callers refused together are told to come back one after
// another, not all at the same instant: 512 callers on PerSecond(100, 100), with
// HTTP's four attempts, are all served, in two attempts at most, as fast as
// the rate allows.
func TestRefusedBurstComesBackSpread(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.PerSecond(100, 100)
		if err != nil {
			t.Fatal(err)
		}
		const callers = 512
		start := time.Now()
		errs := make(chan error, callers)
		attempts := make(chan int, callers)
		p := must(HTTP(Options{}))
		for range callers {
			go func() {
				r := Try(t.Context(), p, acquireOnce(lim))
				attempts <- len(r.Attempts)
				errs <- r.Err
			}()
		}
		failed, most := 0, 0
		for range callers {
			if err := <-errs; err != nil {
				failed++
			}
			most = max(most, <-attempts)
		}
		if failed > 0 || most > 2 {
			t.Fatalf("%d of %d callers failed, and one took %d attempts; want none failed, at most 2 attempts", failed, callers, most)
		}
		// 100 from the full bucket at once, then 100 a second.
		if took, want := time.Since(start), 4120*time.Millisecond; took != want {
			t.Fatalf("%d callers took %v, want %v", callers, took, want)
		}
	})
}

// A wait in our own queue that the policy's overall Timeout ends stops the
// run on the deadline, not as if the attempts ran out.
func TestQueueWaitEndedByOverallTimeoutStopsOnDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, _ := limit.Concurrency(1, limit.WithQueueLimit(10))
		held, _ := lim.Acquire(t.Context())
		defer held.Release()
		p := must(HTTP(Options{Retries: -1, AttemptTimeout: -1, Timeout: headroom.Duration(time.Second), NoBreaker: true, NoBudget: true}))
		r := Try(t.Context(), p, acquireOnce(lim))
		if r.Stop != StopDeadline || len(r.Attempts) != 1 || !r.Attempts[0].Verdict.SelfImposed {
			t.Fatalf("stop %v after %d attempts (err %v); want StopDeadline after one self-imposed refusal", r.Stop, len(r.Attempts), r.Err)
		}
	})
}

// acquireOnce is the callback of the documented pattern: each attempt takes
// its own permit from lim, holds it while the call runs, and succeeds.
func acquireOnce(lim limit.Limiter) func(context.Context) (int, error) {
	return func(ctx context.Context) (int, error) {
		lease, err := lim.Acquire(ctx)
		if err != nil {
			return 0, err
		}
		defer lease.Release()
		return 1, nil
	}
}
