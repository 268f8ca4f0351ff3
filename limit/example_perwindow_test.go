package limit_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit"
)

// A published quota of 1000 calls a minute: the window slides in 8 steps,
// so it cannot be spent at the end of one minute and again at the start of
// the next. A refusal says exactly when to come back.
func ExamplePerWindow() {
	lim, err := limit.PerWindow(1000, time.Minute, limit.WithName("search"))
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if _, err := lim.AcquireN(ctx, 1000); err != nil {
		panic(err)
	}
	_, err = lim.Acquire(ctx)
	var refused *limit.RateLimitedError
	if errors.As(err, &refused) {
		fmt.Println(refused.Limiter, refused.Reason, refused.RetryAfter.Round(time.Second))
	}
	// Output: search no_permit 1m0s
}
