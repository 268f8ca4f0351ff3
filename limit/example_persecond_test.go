package limit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit"
)

// A published quota of 2 calls a second, with one second of burst: the
// bucket starts full, so the first two calls go at once and the third is
// refused with the time until the next permit.
func ExamplePerSecond() {
	lim, err := limit.PerSecond(2, 2, limit.WithName("api"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for i := range 3 {
		lease, err := lim.Acquire(ctx)
		var refused *limit.RateLimitedError
		if errors.As(err, &refused) {
			fmt.Printf("call %d: refused by %s (%s), a permit within %v: %v\n", i+1, refused.Limiter,
				refused.Reason, 500*time.Millisecond, refused.RetryAfter <= 500*time.Millisecond)
			continue
		}
		fmt.Printf("call %d: granted\n", i+1)
		lease.Release()
	}
	// Output:
	// call 1: granted
	// call 2: granted
	// call 3: refused by api (no_permit), a permit within 500ms: true
}

// With a queue, callers wait their turn instead of being refused; the
// context bounds the wait.
func ExamplePerSecond_queue() {
	lim, _ := limit.PerSecond(100, 1, limit.WithQueueLimit(10))
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	start := time.Now()
	for range 3 {
		lease, err := lim.Acquire(ctx)
		if err != nil {
			fmt.Println(err)
			return
		}
		lease.Release()
	}
	fmt.Println("3 permits at 100/s with burst 1 take at least 20ms:", time.Since(start) >= 20*time.Millisecond)
	// Output:
	// 3 permits at 100/s with burst 1 take at least 20ms: true
}
