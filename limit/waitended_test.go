package limit

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// A deadline that ends a caller's wait in the queue is the limiter's
// refusal (telemetry.ReasonDeadline) that still matches context.DeadlineExceeded, so
// a retry runner reads it as a self-imposed throttle; a cancellation is
// ctx.Err() as it is. (The rate shapes foresee a deadline that comes before
// the permits and refuse at once, with the same reason.)
func TestWaitEndedByDeadlineIsARefusal(t *testing.T) {
	shapes := map[string]func() (Limiter, error){
		"concurrency": func() (Limiter, error) { return Concurrency(1, WithQueueLimit(4)) },
		"adaptive": func() (Limiter, error) {
			return Adaptive(adaptive.ConcurrencyConfig{Maximum: 4, Minimum: 1, Initial: 1}, WithQueueLimit(4))
		},
	}
	for name, build := range shapes {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := build()
				if err != nil {
					t.Fatal(err)
				}
				held, err := l.Acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer held.Release()

				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				defer cancel()
				_, err = l.Acquire(ctx)
				var rl *RateLimitedError
				if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("wait ended by its deadline: %v; want a *RateLimitedError (deadline) matching DeadlineExceeded", err)
				}

				ctx, cancel = context.WithCancel(context.Background())
				time.AfterFunc(time.Second, cancel)
				if _, err = l.Acquire(ctx); err != context.Canceled {
					t.Fatalf("wait cancelled: %v; want context.Canceled as it is", err)
				}
			})
		})
	}
}

// A deadline that cannot be met is one shape whichever way it is met: a
// context already expired, a miss the limiter foresees, and a wait the
// deadline ends all return a *RateLimitedError with telemetry.ReasonDeadline that
// matches both ErrRateLimited and context.DeadlineExceeded.
func TestDeadlineIsOneShape(t *testing.T) {
	shapes := map[string]func() (Limiter, error){
		"per_second":  func() (Limiter, error) { return PerSecond(1, 1, WithQueueLimit(10)) },
		"per_window":  func() (Limiter, error) { return PerWindow(1, time.Minute, WithQueueLimit(10)) },
		"concurrency": func() (Limiter, error) { return Concurrency(1, WithQueueLimit(10)) },
		"adaptive": func() (Limiter, error) {
			return New(Options{Adaptive: &adaptive.ConcurrencyConfig{Minimum: 1, Initial: 1, Maximum: 4}, QueueLimit: new(10)})
		},
		"adaptive_rate": func() (Limiter, error) {
			return New(Options{AdaptiveRate: &adaptive.RateConfig{MaxUnitsPerMinute: 60, InitialUnitsPerMinute: 60, MinUnitsPerMinute: 60}, QueueLimit: new(10)})
		},
	}
	check := func(t *testing.T, how string, err error) {
		t.Helper()
		var rl *RateLimitedError
		if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline ||
			!errors.Is(err, ErrRateLimited) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: %v; want a *RateLimitedError (deadline) matching ErrRateLimited and DeadlineExceeded", how, err)
		}
	}
	for name, build := range shapes {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := build()
				if err != nil {
					t.Fatal(err)
				}
				held, err := l.Acquire(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				defer held.Release()

				expired, cancel := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
				defer cancel()
				_, err = l.Acquire(expired)
				check(t, "context already expired", err)

				short, cancel := context.WithTimeout(context.Background(), time.Millisecond)
				defer cancel()
				_, err = l.Acquire(short)
				check(t, "deadline foreseen or ending the wait", err)
			})
		})
	}
}

// A call whose context has ended takes nothing, whatever the shape and
// even with a permit free: a cancellation returns ctx.Err(), a deadline a
// refusal (telemetry.ReasonDeadline), and the permit is still there for the next
// caller.
func TestEndedContextTakesNothing(t *testing.T) {
	shapes := map[string]func() (Limiter, error){
		"per_second":  func() (Limiter, error) { return PerSecond(1, 1) },
		"per_window":  func() (Limiter, error) { return PerWindow(1, time.Minute) },
		"concurrency": func() (Limiter, error) { return Concurrency(1) },
		"adaptive": func() (Limiter, error) {
			return Adaptive(adaptive.ConcurrencyConfig{Minimum: 1, Initial: 1, Maximum: 1})
		},
		"adaptive_rate": func() (Limiter, error) {
			return AdaptiveRate(adaptive.RateConfig{MaxUnitsPerMinute: 60, InitialUnitsPerMinute: 60, MinUnitsPerMinute: 60})
		},
	}
	for name, build := range shapes {
		t.Run(name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := build()
				if err != nil {
					t.Fatal(err)
				}
				cancelled, cancel := context.WithCancel(context.Background())
				cancel()
				expired, cancel2 := context.WithDeadline(context.Background(), time.Now())
				defer cancel2()
				for _, cost := range []int{1, 0} {
					if _, err := l.AcquireN(cancelled, cost); err != context.Canceled {
						t.Errorf("cost %d with a cancelled context: %v; want context.Canceled", cost, err)
					}
					var rl *RateLimitedError
					if _, err := l.AcquireN(expired, cost); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
						t.Errorf("cost %d with an expired context: %v; want a deadline refusal", cost, err)
					}
				}
				lease, err := l.Acquire(context.Background())
				if err != nil {
					t.Fatalf("the permit the ended contexts left: %v", err)
				}
				lease.Release()
			})
		})
	}
}

// ContextEnded is nil for a context that goes on, ctx.Err() for a
// cancellation, and a deadline refusal for a deadline: one the context
// reports, or one the clock has passed before the context's timer fired.
func TestContextEnded(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel := context.WithDeadline(context.Background(), time.Now())
	defer cancel()
	later, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	for _, c := range []struct {
		name     string
		ctx      context.Context
		deadline bool
		err      error
	}{
		{"background", context.Background(), false, nil},
		{"deadline ahead", later, false, nil},
		{"cancelled", cancelled, false, context.Canceled},
		{"expired", expired, true, nil},
		{"passed, timer not fired", passedDeadline{context.Background()}, true, nil},
	} {
		err := ContextEnded(c.ctx, "x")
		var rl *RateLimitedError
		switch {
		case c.deadline:
			if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || rl.Limiter != "x" || !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s: %v; want x's deadline refusal", c.name, err)
			}
		case err != c.err:
			t.Errorf("%s: %v; want %v", c.name, err, c.err)
		}
	}
}

// passedDeadline is a context whose deadline has passed and whose Err has
// not caught up yet.
type passedDeadline struct{ context.Context }

func (passedDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }
