package sim

import (
	"net/http"
	"strconv"
	"time"
)

// The retryablehttp mode is hashicorp/go-retryablehttp v0.7.8 as the
// acceptance suite configures it: what users pick when they only want
// retries. It has no limiter: every attempt goes at once. Its retries are
// the library's own (client.go):
//
//   - Client.Do tries once and then, while CheckRetry says so, up to
//     RetryMax times more; before retry i (0 for the first) it waits
//     Backoff(RetryWaitMin, RetryWaitMax, i, resp).
//   - DefaultRetryPolicy retries a 429, a 5xx other than 501, and a status
//     of 0 (and connection errors, which the model has none of).
//   - DefaultBackoff, on a 429 or a 503, waits the Retry-After the response
//     carries, read by parseRetryAfterHeader (below), however long; else
//     RetryWaitMin × 2^i, capped at RetryWaitMax.
const (
	// retryablehttpRetryMax is Client.RetryMax as the acceptance suite sets
	// it: 3 retries, four attempts a call at most (the library's default,
	// defaultRetryMax, is 4).
	retryablehttpRetryMax = 3
	// retryablehttpWaitMin and retryablehttpWaitMax are the library's
	// defaultRetryWaitMin and defaultRetryWaitMax.
	retryablehttpWaitMin = time.Second
	retryablehttpWaitMax = 30 * time.Second
)

func retryablehttpMode() Mode {
	return Mode{Name: "retryablehttp", headers: true, retry: retryablehttpRetry,
		newLimiter: func(limiterEnv) (limiter, error) { return noLimiter{}, nil }}
}

// retryablehttpRetry is Client.Do's decision after attempt (1 for the
// first) got resp at now.
func retryablehttpRetry(attempt int, resp *response, now time.Duration) (time.Duration, bool) {
	i := attempt - 1
	if !retryablehttpRetries(resp.Status) || i >= retryablehttpRetryMax {
		return 0, false
	}
	return retryablehttpBackoff(i, resp, now), true
}

// retryablehttpRetries is DefaultRetryPolicy for a response.
func retryablehttpRetries(status int) bool {
	return status == http.StatusTooManyRequests || status == 0 || status >= 500 && status != http.StatusNotImplemented
}

// retryablehttpBackoff is DefaultBackoff before retry i.
func retryablehttpBackoff(i int, resp *response, now time.Duration) time.Duration {
	if resp.Status == http.StatusTooManyRequests || resp.Status == http.StatusServiceUnavailable {
		if wait, ok := retryablehttpRetryAfter(resp.Header["Retry-After"], epoch.Add(now)); ok {
			return wait
		}
	}
	if i < 32 && retryablehttpWaitMin<<i <= retryablehttpWaitMax {
		return retryablehttpWaitMin << i
	}
	return retryablehttpWaitMax
}

// retryablehttpRetryAfter is parseRetryAfterHeader: the first value only;
// whole seconds as strconv.ParseInt reads them (no spaces, a sign allowed),
// refused below 0; else an RFC 1123 date, its distance from now, 0 when it
// has passed.
func retryablehttpRetryAfter(values []string, now time.Time) (time.Duration, bool) {
	if len(values) == 0 || values[0] == "" {
		return 0, false
	}
	if s, err := strconv.ParseInt(values[0], 10, 64); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	at, err := time.Parse(time.RFC1123, values[0])
	if err != nil {
		return 0, false
	}
	return max(at.Sub(now), 0), true
}
