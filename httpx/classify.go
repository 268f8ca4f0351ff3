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
// negative and never above 5 minutes (as the quota guard caps a
// Retry-After); the wait until a
// reset is capped the same way. A wait the response names is a hint even
// when it is 0 (Retry-After: 0, a date already past): the retry goes at
// once. The runner caps either further by the
// policy's MaximumDelay and deadline. A throttle without a hint waits on the
// policy's ThrottledBackoff curve.
// maxResetWait caps the wait until a published reset, as the quota guard
// caps a Retry-After.
const maxResetWait = 5 * time.Minute

func Classify(resp *http.Response) resilience.Verdict {
	return classifyAt(resp, time.Time{})
}

// classifyAt is Classify with the time the response was read; the zero time
// means now, read only when a header needs it. A throttle's verdict has a
// hint (HasRetryAfter) whenever the response names its wait, even a wait of
// 0: Retry-After: 0, a date already past, a reset that has come.
func classifyAt(resp *http.Response, now time.Time) resilience.Verdict {
	code := resp.StatusCode
	switch {
	case code < 400:
		return resilience.Verdict{Kind: resilience.Success}
	case code == http.StatusTooManyRequests:
		d, ok := throttleWait(resp.Header, &now)
		return resilience.Verdict{Kind: resilience.Throttled, RetryAfter: d, HasRetryAfter: ok}
	case code == http.StatusServiceUnavailable:
		d, ok := retryAfter(resp.Header, &now)
		return resilience.Verdict{Kind: resilience.Throttled, RetryAfter: d, HasRetryAfter: ok}
	case code == http.StatusForbidden:
		if d, ok, throttle := githubThrottle(resp.Header, &now); throttle {
			return resilience.Verdict{Kind: resilience.Throttled, RetryAfter: d, HasRetryAfter: ok}
		}
		return resilience.Verdict{Kind: resilience.Permanent}
	case code == http.StatusRequestTimeout, code >= 500:
		return resilience.Verdict{Kind: resilience.Transient}
	default:
		return resilience.Verdict{Kind: resilience.Permanent}
	}
}

// retryAfter is the response's Retry-After, and whether it has a readable
// one.
func retryAfter(h http.Header, now *time.Time) (time.Duration, bool) {
	if len(h) == 0 {
		return 0, false
	}
	if now.IsZero() {
		*now = time.Now()
	}
	return quota.ParseRetryAfter(h, *now)
}

// githubThrottle tells a 403 that is GitHub's rate limit from a refusal:
// its primary limit answers with X-RateLimit-Remaining: 0 and the reset in
// X-RateLimit-Reset (epoch seconds); its secondary limits with a
// Retry-After. The wait is the Retry-After, else until the reset, capped as
// Retry-After is; ok says the response named it readably.
func githubThrottle(h http.Header, now *time.Time) (d time.Duration, ok, throttle bool) {
	if _, has := h["Retry-After"]; has {
		d, ok = retryAfter(h, now)
		return d, ok, true
	}
	return untilReset(h, now)
}

// throttleWait is the wait a 429 asks for: its Retry-After (in any form
// quota.ParseRetryAfter reads), else, when it says the quota is spent
// (X-RateLimit-Remaining: 0, as GitHub's primary limit does), until its
// X-RateLimit-Reset; ok is false when it names neither.
func throttleWait(h http.Header, now *time.Time) (time.Duration, bool) {
	if d, ok := retryAfter(h, now); ok {
		return d, true
	}
	d, ok, _ := untilReset(h, now)
	return d, ok
}

// untilReset is the wait until X-RateLimit-Reset when X-RateLimit-Remaining
// is 0, capped as Retry-After is; spent is false when the quota is not
// spent, and ok false when the reset is missing or unreadable (the wait is
// then 0, and no hint).
func untilReset(h http.Header, now *time.Time) (d time.Duration, ok, spent bool) {
	rem := h.Get("X-Ratelimit-Remaining")
	if rem == "" {
		return 0, false, false
	}
	if n, err := strconv.ParseInt(rem, 10, 64); err != nil || n > 0 {
		return 0, false, false
	}
	if now.IsZero() {
		*now = time.Now()
	}
	r, ok := quota.ParseReset(h.Get("X-Ratelimit-Reset"), *now)
	if !ok {
		return 0, false, true
	}
	return max(min(r.Sub(*now), maxResetWait), 0), true, true
}

// throttled is the adaptive layers' throttle classifier: a 429, or a 503
// with a Retry-After (a 503 without one says the server is down, not that the rate is too high), with the
// server's hint (for a 429, as Classify reads it).
func throttled(resp *http.Response) (bool, time.Duration) {
	switch resp.StatusCode {
	case http.StatusTooManyRequests:
		var now time.Time
		d, _ := throttleWait(resp.Header, &now)
		return true, d
	case http.StatusServiceUnavailable:
		now := time.Now()
		if d, ok := quota.ParseRetryAfter(resp.Header, now); ok {
			return true, d
		}
	}
	return false, 0
}
