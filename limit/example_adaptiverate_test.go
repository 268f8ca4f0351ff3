package limit_test

import (
	"context"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// An adaptive rate limiter for an API that answers 429 when it is pushed
// too hard: each call waits for its units, then reports how it went on the
// lease.
func ExampleAdaptiveRate() {
	lim, err := limit.AdaptiveRate(adaptive.RateConfig{
		Controller:        "cubic",
		MaxUnitsPerMinute: 2700, // just below the API's published 3,000
	}, limit.WithName("orders-api"))
	if err != nil {
		panic(err)
	}
	defer lim.Close()

	lease, err := lim.AcquireN(context.Background(), 2) // a write costs 2 units
	if err != nil {
		panic(err) // *limit.RateLimitedError: refused without calling the API
	}
	status, retryAfter := 429, 2*time.Second // the API's answer
	if status == 429 {
		lease.Report(adaptive.Throttled, retryAfter)
	}
	lease.Release()

	// A throttle before the limiter has measured anything answers its
	// first burst, not its rate: it pauses for the Retry-After, and keeps
	// the rate its slow start will raise.
	s := lim.State()
	fmt.Printf("rate %.1f units/min, paused %v for %v\n", s.Rate, !s.PausedUntil.IsZero(), time.Until(s.PausedUntil).Round(time.Second))
	// Output: rate 1125.0 units/min, paused true for 2s
}
