package httpx

import (
	"net/http"
	"strconv"
	"time"

	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
)

// A ResponseClassifier maps a response to a verdict for the resilience
// layer. It must not read or close the body, and must be safe for concurrent
// use. Classify is the default; a classifier of your own can fall back to it.
type ResponseClassifier func(resp *http.Response) resilience.Verdict

// Classify is the default ResponseClassifier:
//
//	429 Too Many Requests         Throttled, with the server's Retry-After,
//	                              else, with X-RateLimit-Remaining: 0, until
//	                              X-RateLimit-Reset
//	503 Service Unavailable       Throttled, with the server's Retry-After
//	403 with X-RateLimit-Remaining: 0, or with a Retry-After
//	                              Throttled (GitHub's primary and secondary
//	                              limits), waiting for the Retry-After, else
//	                              for X-RateLimit-Reset
//	408 and every other 5xx       Transient
//	1xx, 2xx, 3xx                 Success
//	every other 4xx               Permanent
//
// Retry-After is read with quota.ParseRetryAfter (delay seconds, fractional
// too, an HTTP-date in its three forms, retry-after-ms), so it is never
// negative and never above quota.DefaultMaxRetryAfter; the wait until a
// reset is capped the same way. The runner caps either further by the
// policy's MaximumDelay and deadline. A throttle without a hint waits on the
// policy's ThrottledBackoff curve.
func Classify(resp *http.Response) resilience.Verdict {
	return classifyAt(resp, time.Time{})
}

// classifyAt is Classify with the time the response was read; the zero time
// means now, read only when a header needs it.
func classifyAt(resp *http.Response, now time.Time) resilience.Verdict {
	code := resp.StatusCode
	switch {
	case code < 400:
		return resilience.Verdict{Kind: resilience.Success}
	case code == http.StatusTooManyRequests:
		return resilience.Verdict{Kind: resilience.Throttled, RetryAfter: throttleWait(resp.Header, &now)}
	case code == http.StatusServiceUnavailable:
		return resilience.Verdict{Kind: resilience.Throttled, RetryAfter: retryAfter(resp.Header, &now)}
	case code == http.StatusForbidden:
		if d, ok := githubThrottle(resp.Header, &now); ok {
			return resilience.Verdict{Kind: resilience.Throttled, RetryAfter: d}
		}
		return resilience.Verdict{Kind: resilience.Permanent}
	case code == http.StatusRequestTimeout, code >= 500:
		return resilience.Verdict{Kind: resilience.Transient}
	default:
		return resilience.Verdict{Kind: resilience.Permanent}
	}
}

// retryAfter is the response's Retry-After, 0 when it has none.
func retryAfter(h http.Header, now *time.Time) time.Duration {
	if len(h) == 0 {
		return 0
	}
	if now.IsZero() {
		*now = time.Now()
	}
	d, _ := quota.ParseRetryAfter(h, *now)
	return d
}

// githubThrottle tells a 403 that is GitHub's rate limit from a refusal:
// its primary limit answers with X-RateLimit-Remaining: 0 and the reset in
// X-RateLimit-Reset (epoch seconds); its secondary limits with a
// Retry-After. The wait is the Retry-After, else until the reset, capped as
// Retry-After is.
func githubThrottle(h http.Header, now *time.Time) (time.Duration, bool) {
	if _, ok := h["Retry-After"]; ok {
		return retryAfter(h, now), true
	}
	return untilReset(h, now)
}

// throttleWait is the wait a 429 asks for: its Retry-After (in any form
// quota.ParseRetryAfter reads), else, when it says the quota is spent
// (X-RateLimit-Remaining: 0, as GitHub's primary limit does), until its
// X-RateLimit-Reset; 0 when it gives neither.
func throttleWait(h http.Header, now *time.Time) time.Duration {
	if len(h) == 0 {
		return 0
	}
	if now.IsZero() {
		*now = time.Now()
	}
	if d, ok := quota.ParseRetryAfter(h, *now); ok {
		return d
	}
	d, _ := untilReset(h, now)
	return d
}

// untilReset is the wait until X-RateLimit-Reset when X-RateLimit-Remaining
// is 0, capped as Retry-After is; false when the quota is not spent. The
// wait is 0 when the reset is missing or unreadable.
func untilReset(h http.Header, now *time.Time) (time.Duration, bool) {
	rem := h.Get("X-Ratelimit-Remaining")
	if rem == "" {
		return 0, false
	}
	if n, err := strconv.ParseInt(rem, 10, 64); err != nil || n > 0 {
		return 0, false
	}
	if now.IsZero() {
		*now = time.Now()
	}
	var d time.Duration
	if r, ok := quota.ParseReset(h.Get("X-Ratelimit-Reset"), *now); ok {
		d = min(r.Sub(*now), quota.DefaultMaxRetryAfter)
	}
	return max(d, 0), true
}

// throttled is the adaptive layers' throttle classifier: a 429, or a 503
// with a Retry-After (seed 000, "The path of a request", step 4), with the
// server's hint (for a 429, as Classify reads it).
func throttled(resp *http.Response) (bool, time.Duration) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		var now time.Time
		return true, throttleWait(resp.Header, &now)
	case http.StatusServiceUnavailable:
		now := time.Now()
		if d, ok := quota.ParseRetryAfter(resp.Header, now); ok {
			return true, d
		}
	}
	return false, 0
}
