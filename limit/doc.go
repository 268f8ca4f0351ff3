// Package limit is the face of headroom's limiters: one Limiter interface, one
// Lease, one refusal error, for every shape.
//
// # Shapes
//
//   - PerSecond: a token bucket. Permits a second with a burst; starts full.
//   - PerWindow: a sliding window. At most Permits in any interval of length
//     Window, at every alignment.
//   - Concurrency: a bulkhead. At most Permits held at once.
//   - Adaptive: a bulkhead whose limit is learned from latency.
//   - AdaptiveRate: a rate learned from the dependency's throttles (AIMD or
//     CUBIC), shared fairly by the processes that use one budget.
//
// Options describes any of them, ParseOptions reads it from JSON, and
// Validate lists every problem at once, each a *headroom.ConfigError
// (errors.Is(err, headroom.ErrConfig) holds); New builds the limiter. Exactly
// one shape per Options: two are an error, never a silent pick. The
// constructors named after the shapes take the shape's own settings as
// arguments and the options every shape has: WithName, WithQueueLimit,
// WithMeterProvider and WithAttributes.
//
// # Refusal and queueing
//
// A limiter that cannot grant returns a *RateLimitedError, and
// errors.Is(err, ErrRateLimited) holds. Its RetryAfter says when to come
// back. The resilience runner treats it as a self-imposed throttle: it retries
// on the throttled curve, honours RetryAfter, and charges neither the retry
// budget nor the breaker. So the limiter goes inside the retried callback,
// where each attempt takes its own permit:
//
//	v, err := resilience.Run(ctx, policy, func(ctx context.Context) (T, error) {
//		lease, err := lim.Acquire(ctx)
//		if err != nil {
//			return zero, err
//		}
//		defer lease.Release()
//		return fetch(ctx)
//	})
//
// Whether a caller the limiter has no room for is refused or waits is
// Options.QueueLimit (WithQueueLimit), the one queue setting of the
// toolkit: 0 refuses at once, n lets n permits' worth of callers wait in
// FIFO order within a priority level (see below), and nil takes the shape's default, which docs/queueing.md
// lists with its reason: PerSecond, PerWindow, Concurrency and Adaptive
// refuse at once, AdaptiveRate lets 500 units wait. A caller whose context
// has ended takes nothing, even when a permit is free, and one whose context
// ends while it waits leaves the queue and takes no permit with it, one
// rule for every limiter of the module (ContextEnded): a cancellation returns
// ctx.Err(), a deadline a *RateLimitedError (telemetry.ReasonDeadline) that also
// matches context.DeadlineExceeded — a refusal of ours, which a retry
// runner treats as a self-imposed throttle, not as the dependency's
// timeout. The rate shapes know when a permit will be free, so a caller
// whose deadline falls before then is refused at once (telemetry.ReasonDeadline)
// rather than left to wait in vain; so is a caller whose context had
// already expired. The adaptive rate limiter also refuses a wait longer
// than its MaxWait (100 s by default).
// A cost that no wait could satisfy is refused with a *CostError.
//
// # Priorities
//
// A request may carry a Priority in its context (WithPriority): Critical,
// Default or Background; none is Default. Every queue serves critical
// waiters first and background ones last, first come first served within
// a level, with a share for each waiting level that bounds how long a lower
// one waits (Priority states the bound); a full queue refuses its lowest,
// latest waiters to make room for a higher newcomer (telemetry.ReasonShed).
// A limiter reads the priority only when the request has to wait, so a
// caller that never waits pays nothing for it. The quota guard keeps a
// share of the published allowance back from the lower levels
// (quota.Reserves), and httpx takes the priority from the request's context
// or from a function of the request (httpx.WithPriority).
//
// # The lease is the measurement
//
// A Lease carries its grant time and cost back to the limiter on Release,
// with what the call taught it: Throttle(retryAfter), Drop, Ignore, or
// nothing for a success. The limiters that learn read it; the others ignore
// it. Copies of a lease are one lease: the first Release of any copy frees
// its permits, later ones do nothing, and the zero Lease is safe.
//
// # Telemetry
//
// Every limiter reports the metrics package telemetry names (under
// headroom.limiter: leases and permits by outcome, the limit or rate, use
// and availability, the queue, throttles, and the adaptive limiters'
// figures), with the meter provider of Options.MeterProvider or the global
// one. Each measurement carries the limiter's name and kind, then
// Options.Attributes: the HTTP layer adds the host this way
// (WithAttributes). Two live limiters with the same attributes are told
// apart as name#2, name#3. A grant costs at most one atomic add (none for a Concurrency lease of
// one permit, whose bulkhead counts its grants itself); the gauges are
// read when the meter collects. The instruments are unregistered when the
// limiter is collected, or by AdaptiveRateLimiter.Close. docs/telemetry.md
// lists every metric.
//
// # Time
//
// Every engine is a time-explicit core in a subpackage (window, concurrency,
// adaptive, quota); the limiters here are thin shells that read the
// monotonic clock at most once per call and add blocking, timers and
// contexts. Tests of waiting run in testing/synctest bubbles.
package limit
