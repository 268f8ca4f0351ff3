// Package resilience is headroom's runner: it makes the attempts of a call,
// classifies each, waits between them on a backoff curve, and stops when
// the call succeeds or the policy says stop. A retry budget bounds retries
// as a fraction of traffic, a circuit breaker fails fast while a dependency
// is unhealthy, and timeouts bound each attempt and the whole call.
//
//	policy, err := resilience.HTTP(resilience.Options{}) // one per dependency; keep it
//	if err != nil {
//		return err
//	}
//	v, err := resilience.Run(ctx, policy, func(ctx context.Context) (T, error) {
//		lease, err := lim.Acquire(ctx) // inside: one permit per attempt
//		if err != nil {
//			return zero, err
//		}
//		defer lease.Release()
//		return fetch(ctx)
//	})
//
// # Names
//
//   - Run, Try: call fn under a Policy; Try returns a Result with every
//     Attempt and the StopReason.
//   - Policy, built by the presets HTTP and Default adjusted by Options,
//     settings as data (as a JSON configuration holds them too), where a
//     zero field keeps the preset's value. A preset with any one setting is
//     a working policy: the values that depend on others follow what the
//     options set. Both presets list every problem at once (errors.Join of
//     *headroom.ConfigError) and return a nil policy with them;
//     Options.Validate lists the same problems without building.
//   - Verdict{Kind, SelfImposed, RetryAfter}, Kind = Success, Transient,
//     Throttled or Permanent; Options.Classify maps errors to verdicts, and
//     DefaultClassify is the default. An error may carry its own verdict
//     (a method Verdict() Verdict): ThrottledError, PermanentError,
//     TimeoutError.
//   - headroom.Backoff: one exponential curve with jitter
//     (cenkalti/backoff/v4); Options.Backoff for Transient,
//     Options.ThrottledBackoff for Throttled.
//   - Budget (NewBudget, BudgetOptions): Finagle's retry budget.
//   - Breaker (NewBreaker, BreakerOptions, State): the circuit breaker, in
//     ratio or consecutive mode; BreakerOpenError while open.
//
// Every zero value is a complete configuration: Options{} makes one
// attempt, BreakerOptions{} is Polly's breaker and BudgetOptions{} is
// Finagle's budget; a zero field means the default its comment gives.
//
// # What a verdict does
//
//	verdict               retried on                 breaker       budget
//	Success               (stops)                    success       deposit
//	Transient             Backoff                    failure       deposit, withdraw per retry
//	Throttled             ThrottledBackoff or hint   nothing       deposit, withdraw per retry
//	Throttled, self-imp.  ThrottledBackoff or hint   nothing       nothing
//	Permanent             (stops)                    success       deposit
//
// A limiter's refusal, *limit.RateLimitedError, is Throttled and
// SelfImposed: it never left the process, so retrying it costs the
// dependency nothing. If every attempt is refused, the run stops with
// StopAttemptsExhausted and returns the last refusal.
//
// Every delay is the verdict's RetryAfter when set, else the next step of
// its curve; it is capped by Options.MaximumDelay and by the time left on
// the overall deadline (the sooner of Options.Timeout and the caller's
// context deadline): the runner never sleeps past the deadline, it stops
// with StopDeadline instead. The caller's cancellation stops the run at
// once, during an attempt or a delay.
//
// # Deadlines
//
// An attempt that runs out its own AttemptTimeout fails with a
// *TimeoutError, and an attempt the overall deadline (Timeout, or the
// caller's context deadline) ends fails with the attempt's context error:
// both match context.DeadlineExceeded with errors.Is, as the run's error.
//
// # Cost
//
// A run whose first attempt succeeds allocates nothing when the policy has
// no timeouts, or when the caller's context deadline already bounds the
// attempt; otherwise it allocates one small attempt context (the timer and
// the standard context behind it are built only if fn calls Done). The
// backoff curves are set up on the first retry.
package resilience
