package resilience

import (
	"strconv"
	"time"
)

// Kind is what an attempt's outcome says about the call: whether it worked,
// and if not, whether trying again can help and on which curve.
type Kind uint8

// The verdict kinds. Their order matches telemetry's VerdictSuccess,
// VerdictTransient, VerdictThrottled and VerdictPermanent.
const (
	// Success: the attempt worked; the run stops with StopSucceeded.
	Success Kind = iota
	// Transient: a failure that may pass (a timeout, a reset connection, a
	// 5xx). Retried on Options.Backoff; the breaker counts it as a failure.
	Transient
	// Throttled: the dependency, or one of our own limiters, said "not now".
	// Retried on Options.ThrottledBackoff, or after Verdict.RetryAfter when
	// that is set. The breaker records nothing.
	Throttled
	// Permanent: trying again cannot help (a 4xx, a cost no limiter can
	// grant). The run stops with StopPermanent after this one attempt.
	Permanent
)

var kindNames = [...]string{"success", "transient", "throttled", "permanent"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// A Verdict is the classification of one attempt.
type Verdict struct {
	Kind Kind
	// SelfImposed marks a Throttled verdict that never left the process: one
	// of our own limiters refused the attempt (*limit.RateLimitedError).
	// Retrying it costs the dependency nothing, so the retry budget neither
	// takes a deposit for it nor pays for its retry.
	SelfImposed bool
	// RetryAfter is the hint to wait this long before the next attempt: a
	// server's Retry-After or a limiter's own estimate. When above 0, or
	// when HasRetryAfter is set, it replaces the backoff curve (still capped
	// by Options.MaximumDelay and by the time left on the deadline).
	RetryAfter time.Duration
	// HasRetryAfter says RetryAfter is a hint even when it is 0: a server
	// that answers Retry-After: 0, or a date already past, asks for the
	// retry at once. Without it a RetryAfter of 0 means no hint, and the
	// curve decides.
	HasRetryAfter bool
}

// hinted reports whether v says when to retry.
func (v Verdict) hinted() bool { return v.RetryAfter > 0 || v.HasRetryAfter }

func (v Verdict) String() string {
	s := v.Kind.String()
	if v.SelfImposed {
		s += " (self-imposed)"
	}
	switch {
	case v.RetryAfter > 0:
		s += "; retry after " + v.RetryAfter.String()
	case v.HasRetryAfter:
		s += "; retry at once"
	}
	return s
}
