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
// Taking permits is one verb family, as in golang.org/x/time/rate, with the
// time and the cost always given:
//
//   - TryAcquire(now, cost) refuses at once: it takes the permits, or says
//     how long until they would be free (TokenBucket, SlidingWindow);
//   - Reserve(now, cost, maxAhead) books permits for the future and says
//     when they are due, and Cancel gives a pending booking back
//     (TokenBucket, the one engine that can know when permits will be free
//     whatever else is taken meanwhile).
//
// Waiting is the shells'. The constructors check their arguments and report
// every problem at once, each a *headroom.ConfigError of package "window";
// their comments give the bounds.
//
// The engines are safe for concurrent use. Times passed to one engine should
// come from one monotonic clock; an engine tolerates the small disorder that
// concurrent callers reading that clock cause (see TokenBucket).
package window
