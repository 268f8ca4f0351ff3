package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

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
		p := HTTP(WithThrottledBackoff(Backoff{Initial: 3 * time.Second}), WithTimeout(time.Minute))
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) {
			lease, err := lim.Acquire(ctx)
			if err != nil {
				return 0, err
			}
			defer lease.Release()
			return 1, nil
		})
		if r.Err != nil || r.Stop != StopSucceeded || len(r.Attempts) != 4 {
			t.Fatalf("stop %v after %d attempts: %v; want succeeded after 4", r.Stop, len(r.Attempts), r.Err)
		}
		for _, a := range r.Attempts[:3] {
			var rl *limit.RateLimitedError
			if !errors.As(a.Err, &rl) || !a.Verdict.SelfImposed || a.Verdict.Kind != Throttled {
				t.Errorf("refused attempt: %v, %v", a.Verdict, a.Err)
			}
		}
		if got := budgetTokens(p.Budget()); got != budgetScale {
			t.Errorf("budget tokens = %d; want one deposit, no withdrawal", got)
		}
		if ok, fail := breakerCounts(p.Breaker()); ok != 1 || fail != 0 || p.Breaker().State() != Closed {
			t.Errorf("breaker %v saw %d successes, %d failures; want closed, 1, 0", p.Breaker().State(), ok, fail)
		}
	})
}

func TestRealPerSecondHintWins(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.PerSecond(2, limit.WithBurst(1))
		if err != nil {
			t.Fatal(err)
		}
		p := HTTP()
		fn := func(ctx context.Context) (int, error) {
			lease, err := lim.Acquire(ctx)
			if err != nil {
				return 0, err
			}
			defer lease.Release()
			return 1, nil
		}
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
