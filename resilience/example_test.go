package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/resilience"
)

func ExampleRun() {
	policy := resilience.HTTP(resilience.WithName("inventory")) // one per dependency; keep it

	calls := 0
	v, err := resilience.Run(context.Background(), policy, func(ctx context.Context) (string, error) {
		calls++
		if calls == 1 {
			// The server said "too many, come back in 10 ms".
			return "", &resilience.ThrottledError{Err: errors.New("429"), RetryAfter: 10 * time.Millisecond}
		}
		return "42 widgets", nil
	})
	fmt.Println(v, err, calls)
	// Output: 42 widgets <nil> 2
}

func ExampleTry() {
	policy := resilience.Default()

	// Every attempt refused by our own limiter.
	r := resilience.Try(context.Background(), policy, func(ctx context.Context) (int, error) {
		return 0, &limit.RateLimitedError{Limiter: "payments", RetryAfter: time.Millisecond}
	})
	refused := r.Attempts[0]
	fmt.Println(refused.Verdict.Kind, refused.Verdict.SelfImposed, refused.Delay)
	fmt.Println(len(r.Attempts), r.Stop)
	var rl *limit.RateLimitedError
	fmt.Println(errors.As(r.Err, &rl), rl.Limiter)
	// Output:
	// throttled true 1ms
	// 4 attempts_exhausted
	// true payments
}

func ExampleHTTP() {
	p := resilience.HTTP()
	o := p.Options()
	fmt.Println(o.Retries, o.Timeout, o.AttemptTimeout)
	b := p.Breaker().Options()
	fmt.Println(b.FailureRatio, b.MinimumThroughput, b.SamplingDuration, b.BreakDuration)

	// Options that do not fit together are listed at once, and the policy
	// refuses every call with them.
	bad := resilience.HTTP(resilience.WithRetries(-1), resilience.WithAttemptTimeout(time.Minute))
	_, err := resilience.Run(context.Background(), bad, func(ctx context.Context) (int, error) { return 1, nil })
	fmt.Println(err)
	// Output:
	// 3 30s 10s
	// 0.1 100 30s 5s
	// resilience: Retries = -1: want 0 or more
	// resilience: AttemptTimeout = 1m0s: want at most Timeout (30s)
	// resilience: Breaker.SamplingDuration = 30s: want at least twice AttemptTimeout (2m0s)
}

func ExampleNew() {
	o := resilience.HTTPOptions()
	o.Name = "search"
	o.Retries = 1
	p, err := resilience.New(o)
	fmt.Println(p.Options().Name, p.Options().Retries, err)
	// Output: search 1 <nil>
}

func ExampleNewBreaker() {
	br, err := resilience.NewBreaker(resilience.BreakerOptions{
		Name:                "ledger",
		ConsecutiveFailures: 2,
		BreakDuration:       time.Minute,
		OnStateChange:       func(from, to resilience.State) { fmt.Println(from, "->", to) },
	})
	if err != nil {
		panic(err)
	}
	p := resilience.Default(resilience.WithBreaker(br), resilience.WithRetries(0))
	fail := func(ctx context.Context) (int, error) { return 0, errors.New("connection reset") }
	for range 3 {
		_, err = resilience.Run(context.Background(), p, fail)
	}
	var open *resilience.BreakerOpenError
	fmt.Println(errors.As(err, &open), open.RetryAfter > 59*time.Second)
	// Output:
	// closed -> open
	// true true
}

func ExampleNewBudget() {
	// Finagle's defaults: 20 % of calls, plus 10 retries a second, over 10 s.
	b, err := resilience.NewBudget(resilience.DefaultBudgetOptions())
	if err != nil {
		panic(err)
	}
	now := time.Now()
	fmt.Println(b.Balance(now))
	for range 100 {
		b.Deposit(now)
	}
	fmt.Println(b.Balance(now), b.TryWithdraw(now), b.Balance(now))
	// Output:
	// 100
	// 120 true 119
}

func ExampleDefaultClassify() {
	fmt.Println(resilience.DefaultClassify(&limit.RateLimitedError{Limiter: "api", RetryAfter: time.Second}))
	fmt.Println(resilience.DefaultClassify(&resilience.ThrottledError{RetryAfter: 7 * time.Second}))
	fmt.Println(resilience.DefaultClassify(&resilience.PermanentError{Err: errors.New("404")}))
	fmt.Println(resilience.DefaultClassify(errors.New("connection reset")))
	// Output:
	// throttled (self-imposed); retry after 1s
	// throttled; retry after 7s
	// permanent
	// transient
}

func ExampleDefault() {
	// The general preset, for calls that are not HTTP: no timeouts of its
	// own, so the caller's context bounds the call.
	p := resilience.Default(resilience.WithName("ledger"), resilience.WithRetries(1))
	o := p.Options()
	fmt.Println(o.Name, o.Retries, o.Timeout, o.Backoff.Initial, p.Breaker().Name())

	calls := 0
	_, err := resilience.Run(context.Background(), p, func(ctx context.Context) (int, error) {
		calls++
		return 0, &resilience.PermanentError{Err: errors.New("account closed")}
	})
	fmt.Println(err, calls)
	// Output:
	// ledger 1 0s 500ms ledger
	// account closed 1
}
