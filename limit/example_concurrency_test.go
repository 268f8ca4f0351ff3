package limit_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/headroom-go/headroom/limit"
)

// A bulkhead: at most 2 calls in flight at once, whatever their rate.
// Releasing the lease, however the call ended, frees its slot.
func ExampleConcurrency() {
	lim, err := limit.Concurrency(2)
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	first, _ := lim.Acquire(ctx)
	second, _ := lim.Acquire(ctx)

	_, err = lim.Acquire(ctx)
	fmt.Println(errors.Is(err, limit.ErrRateLimited), err)

	first.Release()
	third, err := lim.Acquire(ctx)
	fmt.Println(err, third.Held())

	second.Release()
	third.Release()
	// Output:
	// true limit: concurrency: rate limited (no_permit)
	// <nil> true
}
