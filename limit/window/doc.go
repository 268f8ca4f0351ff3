// Package window holds the engines behind the rate shapes of package limit:
// the token bucket (limit.PerSecond) and the sliding window
// (limit.PerWindow).
//
// Every engine here is a deterministic state machine. Its methods take the
// current time as an argument — a time.Duration offset on the caller's
// monotonic axis, as golang.org/x/time/rate's AllowN takes a time.Time — and
// never read a clock, sleep or start a goroutine. Package limit wraps them in
// thin shells that add the clock, blocking and context cancellation; the
// simulator drives them directly on virtual time.
//
// The engines are safe for concurrent use. Times passed to one engine should
// come from one monotonic clock; an engine tolerates the small disorder that
// concurrent callers reading that clock cause (see TokenBucket).
package window
