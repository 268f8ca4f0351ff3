package quota_test

import (
	"fmt"
	"net/http"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
)

// Background work never spends the last fifth of the allowance while
// critical work is asking for it and the reset is far: with 25 of 100 left
// for the next hour, background stops at 22 (the guard's 2 % and 20 % more)
// and waits for the reset (at most MaxRetryAfter, 5 minutes, before it asks
// again), and critical work goes on.
func ExampleReserves() {
	g, err := quota.New(quota.Options{Reserves: quota.Reserves{Background: 0.2}})
	if err != nil {
		panic(err)
	}
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "100")
	h.Set("X-RateLimit-Remaining", "25")
	h.Set("X-RateLimit-Reset", "3600")
	g.Observe("api", quota.Response{Status: 200, Header: h}, now)

	ok, _ := g.TryAcquirePriorityAt("api", now, 1, limit.Critical)
	fmt.Println("critical:", ok)
	for range 3 {
		ok, wait := g.TryAcquirePriorityAt("api", now, 1, limit.Background)
		fmt.Println("background:", ok, wait.Round(time.Second))
	}
	ok, _ = g.TryAcquirePriorityAt("api", now, 1, limit.Critical)
	fmt.Println("critical:", ok)
	// Output:
	// critical: true
	// background: true 0s
	// background: true 0s
	// background: false 5m0s
	// critical: true
}
