package quota

import (
	"net/http"
	"time"
)

// Retry-After. RFC 9110 §10.2.3 defines it as
// delay-seconds (a non-negative integer) or an HTTP-date; recipients must
// accept the three date forms (IMF-fixdate, RFC 850, asctime), which
// http.ParseTime does. Seen in the wild and accepted here: fractional
// seconds ("2.0" at Shopify), and the millisecond headers retry-after-ms
// (OpenAI, Anthropic and Azure SDKs) and x-ms-retry-after-ms (Azure Cosmos
// DB). A millisecond header is preferred to Retry-After when both are
// present, as the OpenAI Go SDK does: it is the more precise of two values
// for the same wait.
//
// A date is on the server's clock and is corrected with Date when present
// (see reset.go); a date in the past means no wait. Negative, NaN-like or
// otherwise malformed values are ignored.
//
// Every wait is capped. go-retryablehttp honours any Retry-After and its
// users have logged sleeps of 484289h (issues #247, #295); urllib3 caps at
// 6 h, the OpenAI SDK at 8 s. ParseRetryAfter caps at defaultMaxRetryAfter;
// a Guard at its MaxRetryAfter.

const (
	hRetryAfter     = "Retry-After"
	hRetryAfterMs   = "Retry-After-Ms"
	hMsRetryAfterMs = "X-Ms-Retry-After-Ms"
)

// defaultMaxRetryAfter is the longest wait ParseRetryAfter returns and the
// Guard's default MaxRetryAfter: 5 minutes. It covers the longest waits
// services document asking for on purpose — SharePoint's Retry-After up
// to 300 s, Cloudflare's five-minute block — and matches the AWS SDK v1's cap
// on throttle delays; a longer hint is far more likely a unit mistake (epoch
// for seconds) than a request, and a caller that needs longer can say so.
const defaultMaxRetryAfter = 5 * time.Minute

// ParseRetryAfter reads the server's requested wait from retry-after-ms,
// x-ms-retry-after-ms or Retry-After (delay seconds, fractional accepted, or
// an HTTP-date in any of its three forms). The wait is never negative and
// never above defaultMaxRetryAfter; false means no usable value.
func ParseRetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	return parseRetryAfter(h, now, defaultMaxRetryAfter)
}

func parseRetryAfter(h http.Header, now time.Time, maxWait time.Duration) (time.Duration, bool) {
	if len(h) == 0 {
		return 0, false
	}
	p := parser{h: h, now: now}
	d, ok := p.retryAfter()
	if !ok {
		return 0, false
	}
	return clampWait(d, maxWait), true
}

func (p *parser) retryAfter() (time.Duration, bool) {
	for _, k := range [...]string{hRetryAfterMs, hMsRetryAfterMs} {
		if v, ok := p.get(k); ok {
			if d, ok := parseDecimal(v); ok {
				return d.millis(), true
			}
		}
	}
	v, ok := p.get(hRetryAfter)
	if !ok || v == "" {
		return 0, false
	}
	if isDigit(v[0]) || v[0] == '.' {
		d, ok := parseDecimal(v)
		if !ok {
			return 0, false
		}
		return d.seconds(), true
	}
	t, ok := parseHTTPDate(v)
	if !ok {
		return 0, false
	}
	return p.absolute(t).Sub(p.now), true
}

// clampWait keeps d within [0, maxWait].
func clampWait(d, maxWait time.Duration) time.Duration {
	if d < 0 {
		return 0
	}
	if d > maxWait {
		return maxWait
	}
	return d
}
