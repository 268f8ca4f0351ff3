package limit

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A deadline that ends a caller's wait in the queue is the limiter's
// refusal (ReasonDeadline) that still matches context.DeadlineExceeded, so
// a retry runner reads it as a self-imposed throttle; a cancellation is
// ctx.Err() as it is. (The rate shapes foresee a deadline that comes before
// the permits and refuse at once, with the same reason.)
func TestWaitEndedByDeadlineIsARefusal(t *testing.T) {
	shapes := map[string]func() (Limiter, error){
		"concurrency": func() (Limiter, error) { return Concurrency(1, WithQueueLimit(4)) },
		"adaptive": func() (Limiter, error) {
			return Adaptive(4, WithAdaptive(AdaptiveOptions{Minimum: 1, Initial: 1}), WithQueueLimit(4))
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
				if !errors.As(err, &rl) || rl.Reason != ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
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
