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
	"github.com/headroom-go/headroom/telemetry"
)

// refuser is a stand-in limiter: it refuses the first n acquisitions with a
// *limit.RateLimitedError, then grants. held counts permits not released.
type refuser struct {
	n          int
	retryAfter func(i int) time.Duration
	calls      int
	held       int
}

func (r *refuser) acquire() (release func(), err error) {
	i := r.calls
	r.calls++
	if i < r.n {
		return nil, &limit.RateLimitedError{Limiter: "payments", RetryAfter: r.retryAfter(i), Reason: telemetry.ReasonNoPermit}
	}
	r.held++
	return func() { r.held-- }, nil
}

// attemptView is what the tests compare of an Attempt.
type attemptView struct {
	Kind        Kind
	SelfImposed bool
	RetryAfter  time.Duration
	Delay       time.Duration
}

func views(as []Attempt) []attemptView {
	out := make([]attemptView, len(as))
	for i, a := range as {
		out[i] = attemptView{a.Verdict.Kind, a.Verdict.SelfImposed, a.Verdict.RetryAfter, a.Delay}
	}
	return out
}

// budgetTokens is the tokens in the budget's slices: deposits minus
// withdrawals still in the window.
func budgetTokens(b *Budget) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	var s int64
	for _, v := range b.slices {
		s += v.tokens - v.retries*b.withdrawal
	}
	return s
}

// breakerCounts is what the breaker's window holds.
func breakerCounts(b *Breaker) (ok, fail int64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, c := range b.buckets {
		if c.n > b.cur-b.nsub {
			ok, fail = ok+c.success, fail+c.fail
		}
	}
	return ok, fail
}

func TestRefusedThreeTimesThenAdmitted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(HTTP(Options{}))
		lim := &refuser{n: 3, retryAfter: func(int) time.Duration { return 250 * time.Millisecond }}
		start := time.Now()
		r := Try(t.Context(), p, func(ctx context.Context) (string, error) {
			release, err := lim.acquire()
			if err != nil {
				return "", err
			}
			defer release()
			return "ok", nil
		})
		if r.Err != nil || r.Value != "ok" || r.Stop != StopSucceeded {
			t.Fatalf("Try = %q, %v, %v; want ok, nil, succeeded", r.Value, r.Err, r.Stop)
		}
		throttled := attemptView{Kind: Throttled, SelfImposed: true, RetryAfter: 250 * time.Millisecond, Delay: 250 * time.Millisecond}
		want := []attemptView{throttled, throttled, throttled, {Kind: Success}}
		if d := cmp.Diff(want, views(r.Attempts)); d != "" {
			t.Errorf("attempts (-want +got):\n%s", d)
		}
		if got := time.Since(start); got != 750*time.Millisecond {
			t.Errorf("took %v; want 750ms (the limiter's hint, three times)", got)
		}
		// The budget took the one deposit of the call that reached the
		// dependency, and paid for no retry.
		if got := budgetTokens(p.budget); got != budgetScale {
			t.Errorf("budget tokens = %d; want %d (one deposit, no withdrawal)", got, budgetScale)
		}
		if s := p.breaker.State(); s != Closed {
			t.Errorf("breaker %v; want closed", s)
		}
		if ok, fail := breakerCounts(p.breaker); ok != 1 || fail != 0 {
			t.Errorf("breaker saw %d successes, %d failures; want 1, 0", ok, fail)
		}
		if lim.held != 0 {
			t.Errorf("%d permits held after the run", lim.held)
		}
	})
}

func TestEveryAttemptRefused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(HTTP(Options{}))
		lim := &refuser{n: 100, retryAfter: func(i int) time.Duration { return time.Duration(i+1) * 100 * time.Millisecond }}
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) {
			release, err := lim.acquire()
			if err != nil {
				return 0, err
			}
			defer release()
			return 1, nil
		})
		if r.Stop != StopAttemptsExhausted || len(r.Attempts) != 4 {
			t.Fatalf("stop %v after %d attempts; want attempts_exhausted after 4", r.Stop, len(r.Attempts))
		}
		var rl *limit.RateLimitedError
		if !errors.As(r.Err, &rl) || rl.RetryAfter != 400*time.Millisecond || rl.Limiter != "payments" {
			t.Fatalf("err = %v; want the last *limit.RateLimitedError (retry after 400ms)", r.Err)
		}
		if !errors.Is(r.Err, limit.ErrRateLimited) {
			t.Errorf("errors.Is(err, limit.ErrRateLimited) = false")
		}
		if got := budgetTokens(p.budget); got != 0 {
			t.Errorf("budget tokens = %d; want 0: refusals neither deposit nor withdraw", got)
		}
		if ok, fail := breakerCounts(p.breaker); ok != 0 || fail != 0 {
			t.Errorf("breaker saw %d successes, %d failures; want nothing", ok, fail)
		}
		// Run says the same.
		lim.calls = 0
		_, err := Run(t.Context(), p, func(ctx context.Context) (int, error) {
			_, err := lim.acquire()
			return 0, err
		})
		if !errors.As(err, &rl) {
			t.Errorf("Run err = %v; want a *limit.RateLimitedError", err)
		}
	})
}

func TestServerRetryAfterWinsOverCurve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var at []time.Time
		r := Try(t.Context(), must(HTTP(Options{})), func(ctx context.Context) (int, error) {
			at = append(at, time.Now())
			if len(at) == 1 {
				return 0, &ThrottledError{Err: errors.New("429 Too Many Requests"), RetryAfter: 7 * time.Second}
			}
			return 2, nil
		})
		if r.Err != nil || r.Value != 2 || len(at) != 2 {
			t.Fatalf("Try = %v, %v after %d attempts", r.Value, r.Err, len(at))
		}
		if got := at[1].Sub(at[0]); got != 7*time.Second {
			t.Errorf("second attempt %v after the first; want exactly 7s", got)
		}
		want := []attemptView{{Kind: Throttled, RetryAfter: 7 * time.Second, Delay: 7 * time.Second}, {Kind: Success}}
		if d := cmp.Diff(want, views(r.Attempts)); d != "" {
			t.Errorf("attempts (-want +got):\n%s", d)
		}
	})
}

// verdictErr carries a verdict of the test's choosing.
type verdictErr struct{ v Verdict }

func (e *verdictErr) Error() string    { return "verdict " + e.v.String() }
func (e *verdictErr) Verdict() Verdict { return e.v }

// A hint of 0 (a server's Retry-After: 0) retries at once; a RetryAfter of 0
// without HasRetryAfter is no hint, and the throttled curve decides.
func TestZeroHintRetriesAtOnce(t *testing.T) {
	for _, hinted := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			r := Try(t.Context(), must(HTTP(Options{})), func(ctx context.Context) (int, error) {
				return 0, &verdictErr{Verdict{Kind: Throttled, HasRetryAfter: hinted}}
			})
			d := r.Attempts[0].Delay
			if hinted && d != 0 || !hinted && d < 3*time.Second {
				t.Errorf("HasRetryAfter %v: delay %v; want 0 with the hint, the 4s curve without", hinted, d)
			}
		})
	}
}

func TestMaximumDelayCapsHint(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := bare(Options{Retries: 1, MaximumDelay: headroom.Duration(2 * time.Second)})
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) {
			return 0, &ThrottledError{RetryAfter: time.Minute}
		})
		if got := r.Attempts[0].Delay; got != 2*time.Second {
			t.Errorf("delay %v; want MaximumDelay, 2s", got)
		}
	})
}

func TestDeadlineShorterThanDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(HTTP(Options{Timeout: headroom.Duration(5 * time.Second), AttemptTimeout: headroom.Duration(time.Second)}))
		start := time.Now()
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) {
			return 0, &ThrottledError{RetryAfter: 7 * time.Second}
		})
		if r.Stop != StopDeadline || len(r.Attempts) != 1 {
			t.Fatalf("stop %v after %d attempts; want deadline after 1", r.Stop, len(r.Attempts))
		}
		if got := time.Since(start); got != 0 {
			t.Errorf("slept %v; want no sleep", got)
		}
		var te *ThrottledError
		if !errors.As(r.Err, &te) {
			t.Errorf("err = %v; want the last attempt's", r.Err)
		}

		// The caller's deadline counts the same way.
		ctx, cancel := context.WithTimeout(t.Context(), 3*time.Second)
		defer cancel()
		r = Try(ctx, must(Default(Options{})), func(ctx context.Context) (int, error) {
			return 0, &ThrottledError{RetryAfter: 3 * time.Second}
		})
		if r.Stop != StopDeadline || time.Since(start) != 0 {
			t.Errorf("stop %v after %v; want deadline, no sleep", r.Stop, time.Since(start))
		}
	})
}

func TestPermanentStopsAtOnce(t *testing.T) {
	for _, e := range []error{
		&PermanentError{Err: errors.New("404")},
		&limit.CostError{Limiter: "x", Cost: 10, Capacity: 5},
	} {
		synctest.Test(t, func(t *testing.T) {
			calls := 0
			r := Try(t.Context(), must(HTTP(Options{})), func(ctx context.Context) (int, error) {
				calls++
				return 0, e
			})
			if r.Stop != StopPermanent || calls != 1 || !errors.Is(r.Err, e) {
				t.Errorf("%T: stop %v after %d calls, err %v; want permanent after 1", e, r.Stop, calls, r.Err)
			}
		})
	}
}

func TestTransientCurve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := bare(Options{Retries: 3, Backoff: headroom.Backoff{Initial: headroom.Duration(time.Second), Multiplier: 2, Jitter: new(0.0)}})
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) { return 0, errors.New("reset") })
		want := []attemptView{
			{Kind: Transient, Delay: time.Second},
			{Kind: Transient, Delay: 2 * time.Second},
			{Kind: Transient, Delay: 4 * time.Second},
			{Kind: Transient},
		}
		if d := cmp.Diff(want, views(r.Attempts)); d != "" {
			t.Errorf("attempts (-want +got):\n%s", d)
		}
		if r.Stop != StopAttemptsExhausted {
			t.Errorf("stop %v", r.Stop)
		}
	})
}

func TestJitterStaysOnCurve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := must(HTTP(Options{NoBudget: true, NoBreaker: true, Timeout: -1, AttemptTimeout: -1, Retries: 2}))
		for range 20 {
			r := Try(t.Context(), p, func(ctx context.Context) (int, error) { return 0, &ThrottledError{} })
			for i, lo := range []time.Duration{3200 * time.Millisecond, 6400 * time.Millisecond} {
				if d := r.Attempts[i].Delay; d < lo || d > lo*12/8+time.Millisecond {
					t.Fatalf("throttled delay %d = %v; want %v ± 20%% of %v", i, d, lo, lo*10/8)
				}
			}
		}
	})
}

func TestAttemptTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := bare(Options{Retries: 5, Timeout: headroom.Duration(2500 * time.Millisecond), AttemptTimeout: headroom.Duration(time.Second),
			Backoff: headroom.Backoff{Initial: headroom.Duration(time.Millisecond), Multiplier: 1, Jitter: new(0.0)}})
		start := time.Now()
		var deadlines []time.Duration
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) {
			d, _ := ctx.Deadline()
			deadlines = append(deadlines, d.Sub(start))
			<-ctx.Done()
			return 0, ctx.Err()
		})
		// Attempts at 0 s and 1.001 s run out their own timeout
		// (Transient); the third is cut to the time left on the overall
		// deadline.
		if d := cmp.Diff([]time.Duration{time.Second, 2001 * time.Millisecond, 2500 * time.Millisecond}, deadlines); d != "" {
			t.Errorf("attempt deadlines (-want +got):\n%s", d)
		}
		if r.Stop != StopDeadline || len(r.Attempts) != 3 {
			t.Fatalf("stop %v after %d attempts; want deadline after 3", r.Stop, len(r.Attempts))
		}
		var te *TimeoutError
		if !errors.As(r.Attempts[0].Err, &te) || te.Timeout != time.Second || r.Attempts[0].Verdict.Kind != Transient {
			t.Errorf("attempt 0: %v, %v; want a Transient *TimeoutError", r.Attempts[0].Verdict, r.Attempts[0].Err)
		}
		if !errors.Is(r.Err, context.DeadlineExceeded) {
			t.Errorf("err = %v; want context.DeadlineExceeded", r.Err)
		}
		if got := time.Since(start); got != 2500*time.Millisecond {
			t.Errorf("took %v; want 2.5s", got)
		}
	})
}

func TestAttemptContextLinkedWithCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p, _ := bare(Options{Retries: 3, AttemptTimeout: headroom.Duration(time.Minute)})
		go func() {
			time.Sleep(time.Second)
			cancel()
		}()
		start := time.Now()
		r := Try(ctx, p, func(ctx context.Context) (int, error) {
			<-ctx.Done()
			return 0, context.Cause(ctx)
		})
		if r.Stop != StopCancelled || len(r.Attempts) != 1 || !errors.Is(r.Err, context.Canceled) {
			t.Errorf("stop %v after %d attempts, err %v; want cancelled after 1", r.Stop, len(r.Attempts), r.Err)
		}
		if got := time.Since(start); got != time.Second {
			t.Errorf("took %v; want 1s", got)
		}
	})
}

func TestCancelledDuringDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx, cancel := context.WithCancel(t.Context())
		p, _ := bare(Options{Retries: 3, Backoff: headroom.Backoff{Initial: headroom.Duration(time.Minute)}})
		time.AfterFunc(time.Second, cancel)
		start := time.Now()
		_, err := Run(ctx, p, func(ctx context.Context) (int, error) { return 0, errors.New("boom") })
		if !errors.Is(err, context.Canceled) || time.Since(start) != time.Second {
			t.Errorf("err %v after %v; want context.Canceled after 1s", err, time.Since(start))
		}
	})
}

func TestLazyAttemptContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent, cancel := context.WithCancel(t.Context())
		defer cancel()
		c := &attemptCtx{parent: parent, deadline: time.Now().Add(time.Second)}
		if c.Err() != nil {
			t.Fatal("fresh context has an error")
		}
		time.Sleep(time.Second)
		if c.Err() != context.DeadlineExceeded {
			t.Fatalf("Err = %v after the deadline; want DeadlineExceeded", c.Err())
		}
		<-c.Done() // built late: already done
		if context.Cause(c) != context.DeadlineExceeded {
			t.Errorf("Cause = %v", context.Cause(c))
		}
		c.end()

		c = &attemptCtx{parent: parent, deadline: time.Now().Add(time.Second)}
		c.end()
		if c.Err() != context.Canceled {
			t.Errorf("Err after end = %v; want Canceled", c.Err())
		}
		select {
		case <-c.Done():
		default:
			t.Error("Done not closed after end")
		}
		if c.Value(struct{}{}) != nil {
			t.Error("Value of a missing key")
		}
	})
}

func TestPanicPropagates(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Second})
		p := must(HTTP(Options{Breaker: br, Retries: -1}))
		_, _ = Run(t.Context(), p, func(ctx context.Context) (int, error) { return 0, errors.New("x") })
		time.Sleep(time.Second) // the next call is the half-open probe
		lim := &refuser{}
		boom := errors.New("boom")
		func() {
			defer func() {
				if r := recover(); r != boom {
					t.Errorf("recovered %v; want the panic value", r)
				}
			}()
			_, _ = Run(t.Context(), p, func(ctx context.Context) (int, error) {
				release, _ := lim.acquire()
				defer release()
				<-time.After(10 * time.Millisecond)
				_ = ctx.Done() // build the attempt's real context and timer
				panic(boom)
			})
			t.Error("Run returned")
		}()
		if lim.held != 0 {
			t.Errorf("%d permits held after the panic", lim.held)
		}
		// The probe slot was freed: the next call is let through as a probe.
		if v, err := Run(t.Context(), p, func(ctx context.Context) (int, error) { return 3, nil }); v != 3 || err != nil {
			t.Errorf("after the panic: %v, %v; want the probe to pass", v, err)
		}
		if br.State() != Closed {
			t.Errorf("breaker %v; want closed by the probe", br.State())
		}
		synctest.Wait() // no goroutine left behind (goleak checks the rest)
	})
}

func TestInvalidPolicy(t *testing.T) {
	// A policy that failed to build is nil: every run with it is refused,
	// without a call.
	p, err := HTTP(Options{Retries: -1, Timeout: headroom.Duration(time.Second), AttemptTimeout: headroom.Duration(time.Minute)})
	if p != nil || err == nil {
		t.Fatalf("HTTP with conflicting options = %v, %v; want nil and an error", p, err)
	}
	calls := 0
	r := Try(t.Context(), p, func(ctx context.Context) (int, error) { calls++; return 0, nil })
	var oe *headroom.ConfigError
	if r.Stop != StopInvalid || calls != 0 || !errors.As(r.Err, &oe) {
		t.Errorf("stop %v, %d calls, err %v; want invalid, no call, a configuration error", r.Stop, calls, r.Err)
	}
	if _, err := Run[int](t.Context(), nil, nil); !errors.Is(err, headroom.ErrConfig) {
		t.Errorf("nil policy: %v; want a configuration error", err)
	}
}

func TestEveryStopReason(t *testing.T) {
	seen := map[StopReason]bool{}
	fail := func(ctx context.Context) (int, error) { return 0, errors.New("x") }
	synctest.Test(t, func(t *testing.T) {
		quick := headroom.Backoff{Initial: headroom.Duration(time.Millisecond)}
		p, _ := bare(Options{Retries: 1, Backoff: quick})
		seen[Try(t.Context(), p, func(ctx context.Context) (int, error) { return 1, nil }).Stop] = true
		seen[Try(t.Context(), p, fail).Stop] = true
		seen[Try(t.Context(), p, func(ctx context.Context) (int, error) { return 0, &PermanentError{} }).Stop] = true
		pd, _ := bare(Options{Retries: 1, Timeout: headroom.Duration(time.Second), Backoff: headroom.Backoff{Initial: headroom.Duration(time.Hour)}})
		seen[Try(t.Context(), pd, fail).Stop] = true
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		seen[Try(ctx, p, fail).Stop] = true
		br, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Hour})
		pb, _ := bare(Options{Retries: 1, Backoff: quick, Breaker: br})
		seen[Try(t.Context(), pb, fail).Stop] = true
		bu, _ := NewBudget(BudgetOptions{TTL: time.Second, MinRetriesPerSecond: new(0), Ratio: new(0.0)})
		pu, _ := bare(Options{Retries: 1, Backoff: quick, Budget: bu})
		seen[Try(t.Context(), pu, fail).Stop] = true
		invalid, _ := HTTP(Options{Backoff: headroom.Backoff{Multiplier: 0.5}})
		seen[Try(t.Context(), invalid, fail).Stop] = true
	})
	for r := StopSucceeded; r <= StopInvalid; r++ {
		if !seen[r] {
			t.Errorf("stop reason %v not reached", r)
		}
	}
}

func TestBudgetDeniesRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A floor of 1 retry a second over 1 s, nothing from traffic: one
		// retry in the window.
		bu, _ := NewBudget(BudgetOptions{TTL: time.Second, MinRetriesPerSecond: new(1), Ratio: new(0.0)})
		p, _ := bare(Options{Retries: 5, Budget: bu})
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) { return 0, errors.New("x") })
		if r.Stop != StopBudgetExhausted || len(r.Attempts) != 2 {
			t.Errorf("stop %v after %d attempts; want budget_exhausted after 2", r.Stop, len(r.Attempts))
		}
		time.Sleep(time.Second) // the withdrawal expires
		r = Try(t.Context(), p, func(ctx context.Context) (int, error) { return 0, errors.New("x") })
		if len(r.Attempts) != 2 {
			t.Errorf("after the window: %d attempts; want 2 (refilled)", len(r.Attempts))
		}
	})
}

func TestTelemetryOrder(t *testing.T) {
	// telemetry takes verdicts, stops and states by number.
	for k := Success; k <= Permanent; k++ {
		if got := telemetryVerdict(k); got != k.String() {
			t.Errorf("verdict %d: telemetry %q, resilience %q", k, got, k)
		}
	}
	for r := StopSucceeded; r <= StopInvalid; r++ {
		if got := telemetryStop(r); got != r.String() {
			t.Errorf("stop %d: telemetry %q, resilience %q", r, got, r)
		}
	}
	if int(Closed) != telemetryClosed || int(HalfOpen) != telemetryHalfOpen || int(Open) != telemetryOpen {
		t.Error("breaker states do not match telemetry's")
	}
}

// A refusal by one of our own limiters that its wait ran into the attempt's
// deadline (a *limit.RateLimitedError that wraps the context's error, as a
// queueing limiter returns) is still a refusal: Throttled and self-imposed,
// never a *TimeoutError. The dependency was never called, so the breaker
// records nothing and the budget takes no deposit.
func TestRefusalAtAttemptDeadlineIsSelfImposed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Minute})
		bu, _ := NewBudget(BudgetOptions{TTL: 10 * time.Second, MinRetriesPerSecond: new(0), Ratio: new(1.0)})
		p := must(HTTP(Options{Retries: 1, AttemptTimeout: headroom.Duration(time.Second), Timeout: headroom.Duration(time.Minute), ThrottledBackoff: headroom.Backoff{Initial: headroom.Duration(time.Millisecond), Jitter: new(0.0)}, Breaker: br, Budget: bu}))
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) {
			<-ctx.Done() // queued in our own limiter until the attempt's deadline
			return 0, &waitRefusal{&limit.RateLimitedError{Limiter: "local", Reason: telemetry.ReasonDeadline}, ctx.Err()}
		})
		want := []attemptView{{Throttled, true, 0, time.Millisecond}, {Throttled, true, 0, 0}}
		if d := cmp.Diff(want, views(r.Attempts)); d != "" {
			t.Errorf("attempts (-want +got):\n%s", d)
		}
		if _, ok := errors.AsType[*TimeoutError](r.Err); ok || r.Stop != StopAttemptsExhausted {
			t.Errorf("stop %v, err %v; want attempts exhausted on the refusal, no *TimeoutError", r.Stop, r.Err)
		}
		if br.State() != Closed || budgetTokens(bu) != 0 {
			t.Errorf("breaker %v, budget tokens %d; want closed and untouched", br.State(), budgetTokens(bu))
		}
	})
}

// waitRefusal is a limiter's refusal that wraps the context error that
// ended its wait.
type waitRefusal struct {
	rl  *limit.RateLimitedError
	ctx error
}

func (e *waitRefusal) Error() string   { return e.rl.Error() + ": " + e.ctx.Error() }
func (e *waitRefusal) Unwrap() []error { return []error{e.rl, e.ctx} }

// Every way a run meets its deadline gives an error that matches
// context.DeadlineExceeded, and still the last attempt's error.
func TestDeadlineErrorsMatchDeadlineExceeded(t *testing.T) {
	throttled := &ThrottledError{RetryAfter: 7 * time.Second}
	for _, c := range []struct {
		name     string
		ctx      func(context.Context) (context.Context, context.CancelFunc)
		opts     Options
		fn       func(context.Context) (int, error)
		stop     StopReason
		attempts int
		is       error // the attempt's error the run's must also match
	}{
		{"attempt timeout", nil, Options{Retries: -1, AttemptTimeout: headroom.Duration(time.Second)},
			func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, StopAttemptsExhausted, 1, nil},
		{"overall timeout in an attempt", nil, Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: -1},
			func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, StopDeadline, 1, nil},
		{"overall timeout, fn ignores its context", nil, Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: -1},
			func(ctx context.Context) (int, error) { time.Sleep(3 * time.Second); return 0, throttled }, StopDeadline, 1, throttled},
		{"next delay past the deadline", nil, Options{Timeout: headroom.Duration(5 * time.Second)},
			func(ctx context.Context) (int, error) { return 0, throttled }, StopDeadline, 1, throttled},
		{"caller's deadline", func(ctx context.Context) (context.Context, context.CancelFunc) {
			return context.WithTimeout(ctx, time.Second)
		}, Options{Timeout: -1, AttemptTimeout: -1},
			func(ctx context.Context) (int, error) { <-ctx.Done(); return 0, ctx.Err() }, StopDeadline, 1, nil},
	} {
		c.opts.NoBreaker, c.opts.NoBudget = true, true
		t.Run(c.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				ctx := t.Context()
				if c.ctx != nil {
					var cancel context.CancelFunc
					ctx, cancel = c.ctx(ctx)
					defer cancel()
				}
				r := Try(ctx, must(HTTP(c.opts)), c.fn)
				if r.Stop != c.stop || len(r.Attempts) != c.attempts {
					t.Fatalf("%s: stop %v after %d attempts; want %v after %d", c.name, r.Stop, len(r.Attempts), c.stop, c.attempts)
				}
				if !errors.Is(r.Err, context.DeadlineExceeded) {
					t.Errorf("%s: err %v does not match context.DeadlineExceeded", c.name, r.Err)
				}
				if c.is != nil && !errors.Is(r.Err, c.is) {
					t.Errorf("%s: err %v does not match the attempt's %v", c.name, r.Err, c.is)
				}
			})
		})
	}
	var te *TimeoutError
	if err := error(&TimeoutError{Timeout: time.Second, Err: context.DeadlineExceeded}); !errors.As(err, &te) ||
		!errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("*TimeoutError %v does not match context.DeadlineExceeded", err)
	}
}
