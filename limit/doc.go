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
// Options describes any of them, reads from JSON, and Validate lists every
// problem at once; New builds the limiter. Exactly one shape per Options.
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
// QueueLimit is 0 by default for the four fixed shapes: a call that cannot
// get a permit is refused at once. With QueueLimit above 0, up to that many
// permits' worth of callers wait in FIFO order; a caller whose context ends
// leaves the queue with ctx.Err() and takes no permit with it, and one whose
// deadline falls before a permit would be free is refused at once rather
// than left to wait in vain. The adaptive rate limiter queues by default.
//
// # The lease is the measurement
//
// A Lease carries its grant time and cost back to the limiter on Release,
// with what the call taught it: Throttle(retryAfter), Drop, Ignore, or
// nothing for a success. The limiters that learn read it; the others ignore
// it. Release is idempotent and the zero Lease is safe.
//
// # Time
//
// Every engine is a time-explicit core in a subpackage (window, concurrency,
// adaptive, quota); the limiters here are thin shells that read the
// monotonic clock at most once per call and add blocking, timers and
// contexts. Tests of waiting run in testing/synctest bubbles.
package limit
