package resilience_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/resilience"
)

func ExampleRun() {
	policy, err := resilience.HTTP(resilience.Options{Name: "inventory"}) // one per dependency; keep it
	if err != nil {
		panic(err)
	}

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
	policy, err := resilience.Default(resilience.Options{})
	if err != nil {
		panic(err)
	}

	// Every attempt refused by our own limiter.
	r := resilience.Try(context.Background(), policy, func(ctx context.Context) (int, error) {
		return 0, &limit.RateLimitedError{Limiter: "payments", RetryAfter: time.Millisecond}
	})
	refused := r.Attempts[0]
	fmt.Println(refused.Verdict.Kind, refused.Verdict.SelfImposed, refused.Delay)
	fmt.Println(len(r.Attempts), r.Stop, r.Stop == resilience.StopAttemptsExhausted)
	var rl *limit.RateLimitedError
	fmt.Println(errors.As(r.Err, &rl), rl.Limiter)
	// Output:
	// throttled true 1ms
	// 4 attempts_exhausted true
	// true payments
}

func ExampleHTTP() {
	// The preset with a shorter overall timeout: its 10 s attempt timeout
	// follows, to a third of it.
	policy, err := resilience.HTTP(resilience.Options{Timeout: headroom.Duration(3 * time.Second)})
	fmt.Println(err)

	start := time.Now()
	r := resilience.Try(context.Background(), policy, func(ctx context.Context) (int, error) {
		deadline, _ := ctx.Deadline()
		fmt.Println("attempt deadline in", deadline.Sub(start).Round(100*time.Millisecond))
		return 1, nil
	})
	fmt.Println(r.Value, r.Err)

	// Options that conflict are reported when the policy is built, all at
	// once.
	_, err = resilience.HTTP(resilience.Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: headroom.Duration(5 * time.Second),
		Backoff: headroom.Backoff{Multiplier: 0.5}})
	fmt.Println(err)
	// Output:
	// <nil>
	// attempt deadline in 1s
	// 1 <nil>
	// resilience: AttemptTimeout = 5s: want at most Timeout (2s)
	// resilience: Backoff.Multiplier = 0.5: want 0 (the default) or a finite factor of 1 or more
}

// Options as data, as a JSON configuration holds them: a zero field keeps
// the preset's value.
func ExampleOptions() {
	policy, err := resilience.Default(resilience.Options{
		Name:           "search",
		Retries:        1,
		AttemptTimeout: headroom.Duration(time.Second),
		Backoff:        headroom.Backoff{Initial: headroom.Duration(10 * time.Millisecond), Jitter: new(0.0)},
	})
	if err != nil {
		panic(err)
	}
	r := resilience.Try(context.Background(), policy, func(ctx context.Context) (int, error) {
		return 0, errors.New("connection reset")
	})
	fmt.Println(len(r.Attempts), r.Attempts[0].Delay, r.Stop, r.Err)
	// Output: 2 10ms attempts_exhausted connection reset
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
	p, err := resilience.Default(resilience.Options{Breaker: br, Retries: -1})
	if err != nil {
		panic(err)
	}
	fail := func(ctx context.Context) (int, error) { return 0, errors.New("connection reset") }
	for range 3 {
		_, err = resilience.Run(context.Background(), p, fail)
	}
	var open *resilience.BreakerOpenError
	fmt.Println(errors.As(err, &open), open.RetryAfter > 59*time.Second, br.State())
	// Output:
	// closed -> open
	// true true open
}

func ExampleNewBudget() {
	// The zero options are Finagle's: 20 % of calls, plus 10 retries a
	// second, over 10 s. This one allows no retry without traffic to pay
	// for it.
	budget, err := resilience.NewBudget(resilience.BudgetOptions{MinRetriesPerSecond: new(0)})
	if err != nil {
		panic(err)
	}
	p, err := resilience.Default(resilience.Options{Budget: budget, Backoff: headroom.Backoff{Initial: headroom.Duration(time.Millisecond)}})
	if err != nil {
		panic(err)
	}
	r := resilience.Try(context.Background(), p, func(ctx context.Context) (int, error) {
		return 0, errors.New("connection reset")
	})
	fmt.Println(len(r.Attempts), r.Stop)
	// Output: 1 budget_exhausted
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
	p, err := resilience.Default(resilience.Options{Name: "ledger", Retries: 1})
	if err != nil {
		panic(err)
	}
	calls := 0
	_, err = resilience.Run(context.Background(), p, func(ctx context.Context) (int, error) {
		calls++
		_, bounded := ctx.Deadline()
		fmt.Println("attempt bounded:", bounded)
		return 0, &resilience.PermanentError{Err: errors.New("account closed")}
	})
	fmt.Println(err, calls)
	// Output:
	// attempt bounded: false
	// account closed 1
}
