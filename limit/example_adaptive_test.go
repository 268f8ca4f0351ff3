package limit_test

import (
	"context"
	"fmt"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// The bulkhead you do not have to size: set the ceiling it may never pass;
// the number under it is read from how the dependency responds under load.
func ExampleAdaptive() {
	lim, err := limit.Adaptive(adaptive.ConcurrencyConfig{Maximum: 200}, limit.WithName("payments"))
	if err != nil {
		panic(err)
	}
	call := func(ctx context.Context) error {
		lease, err := lim.Acquire(ctx)
		if err != nil {
			return err // *limit.RateLimitedError: refused, never sent
		}
		// The lease is the measurement: how long it is held is the latency
		// the loop reads. Report a timeout or a 503 with lease.Report(adaptive.Dropped, 0).
		defer lease.Release()
		return nil // the call itself
	}
	_ = call(context.Background())

	// No opinion until it has seen 100 calls (Baseline says the same of
	// what it thinks a fast call takes).
	n, ok := lim.CurrentLimit()
	fmt.Println(n, ok)
	// Output: 0 false
}
