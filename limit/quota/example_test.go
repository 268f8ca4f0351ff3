package quota_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
)

var now = time.Date(2025, 8, 21, 12, 40, 0, 0, time.UTC)

func ExampleParse() {
	// OpenAI publishes two buckets; the tokens one is nearly spent.
	h := http.Header{}
	h.Set("x-ratelimit-limit-requests", "5000")
	h.Set("x-ratelimit-remaining-requests", "4999")
	h.Set("x-ratelimit-reset-requests", "12ms")
	h.Set("x-ratelimit-limit-tokens", "40000")
	h.Set("x-ratelimit-remaining-tokens", "312")
	h.Set("x-ratelimit-reset-tokens", "1.5s")

	q, ok := quota.Parse(h, now)
	fmt.Println(ok, q.Dialect, q.Policy, q.Remaining, "of", q.Limit, "until", q.Reset.Sub(now))
	// Output: true openai tokens 312 of 40000 until 1.5s
}

func ExampleParse_ietf() {
	h := http.Header{}
	h.Set("RateLimit-Policy", `"burst";q=100;w=60,"daily";q=1000;w=86400`)
	h.Set("RateLimit", `"burst";r=0;t=30, "daily";r=950;t=80000`)

	q, _ := quota.Parse(h, now)
	fmt.Println(q.Policy, q.Remaining, "of", q.Limit, "per", q.Window, "until", q.Reset.Sub(now))
	// Output: burst 0 of 100 per 1m0s until 30s
}

func ExampleParseRetryAfter() {
	for _, v := range []string{"120", "2.0", "Thu, 21 Aug 2025 12:41:30 GMT", "1743441608"} {
		d, ok := quota.ParseRetryAfter(http.Header{"Retry-After": {v}}, now)
		fmt.Println(v, "→", d, ok)
	}
	// Output:
	// 120 → 2m0s true
	// 2.0 → 2s true
	// Thu, 21 Aug 2025 12:41:30 GMT → 1m30s true
	// 1743441608 → 5m0s true
}

func ExampleParseReset() {
	for _, v := range []string{"30", "1755780090", "1755780090500"} {
		t, _ := quota.ParseReset(v, now)
		fmt.Println(v, "→", t.Sub(now))
	}
	// Output:
	// 30 → 30s
	// 1755780090 → 1m30s
	// 1755780090500 → 1m30.5s
}

// The guard on the caller's clock: a response says 3 of GitHub's 5,000
// requests are left; the reserve keeps 100 back, so the next attempt waits
// for the reset, capped at MaxRetryAfter (5 minutes by default).
func ExampleNew() {
	g, err := quota.New(quota.Options{Name: "github"})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := http.Header{}
	h.Set("x-ratelimit-limit", "5000")
	h.Set("x-ratelimit-remaining", "3")
	h.Set("x-ratelimit-reset", fmt.Sprint(now.Add(10*time.Minute).Unix()))
	h.Set("x-ratelimit-resource", "core")
	g.Observe("api.github.com", quota.Response{Status: http.StatusOK, Header: h}, now)

	fmt.Println(g.TryAcquireAt("api.github.com", now, 1))
	// Output: false 5m0s
}

// Acquire is the step before an attempt on real time. With RefuseAtOnce it
// refuses an attempt the quota has no room for, with a
// *limit.RateLimitedError saying how long until there is.
func ExampleGuard_Acquire() {
	g, err := quota.New(quota.Options{Name: "github", QueueLimit: new(0)})
	if err != nil {
		fmt.Println(err)
		return
	}
	h := http.Header{}
	h.Set("x-ratelimit-limit", "5000")
	h.Set("x-ratelimit-remaining", "0")
	h.Set("x-ratelimit-reset", fmt.Sprint(time.Now().Add(time.Hour).Unix()))
	g.Observe("api.github.com", quota.Response{Status: http.StatusOK, Header: h}, time.Now())

	slot, err := g.Acquire(context.Background(), "api.github.com", 1)
	defer slot.Release()
	var rl *limit.RateLimitedError
	fmt.Println(errors.As(err, &rl), rl.Limiter, rl.Reason, rl.RetryAfter)
	// Output: true github no_permit 5m0s
}

func ExampleOptions_Validate() {
	o := quota.Options{ReserveFraction: new(1.5), MaxInFlight: -1}
	fmt.Println(o.Validate())
	// Output:
	// quota: ReserveFraction = 1.5: want a fraction in [0, 1), such as 0.02
	// quota: MaxInFlight = -1: want 0 (no cap) or more
}
