// Package adaptive holds headroom's engines that learn: the latency-adaptive
// concurrency limit and the throttle-driven adaptive rate limiter with its
// RateController, AIMD and CUBIC.
//
// Both are deterministic cores: every method takes the
// current time as an argument, an offset on the caller's monotonic axis, and
// nothing reads a clock, sleeps, starts a goroutine or sets a timer. The
// faces in package limit (limit.Adaptive and limit.AdaptiveRate) add the
// mutex, real time, timers and context cancellation; the simulator (package
// sim) drives the same cores on virtual time. The cores are not safe for
// concurrent use.
//
// # The latency-adaptive concurrency limit
//
// A concurrency limit learned from the latency and the drops of the calls
// it admits: Concurrency, configured by ConcurrencyConfig, with a baseline
// latency it keeps (the p10 of the last five minutes); limit.Adaptive is
// its face.
//
// # Taking permits, and what a call taught
//
// Every engine of headroom takes permits with one verb,
// TryAcquire(now, cost) (ok bool, retryAfter time.Duration): it grants or
// refuses at once and never blocks. Concurrency's retryAfter is 0 (when a
// holder releases is not its to know); Rate's is how long until the units
// would be there at the current rate. A refused request waits in Rate's
// FIFO queue (Enqueue, then Next and Dequeue) rather than booking units
// ahead: a throttle moves every waiter's turn. Waiting with a context is
// the shells'.
//
// What a call taught comes back in one vocabulary, Outcome (Success,
// Throttled, Dropped, Ignored), on each engine's Release, with what that
// engine reads besides: Concurrency.Release(now, latency, cost, outcome),
// Rate.Release(now, sentAt, cost, outcome, retryAfter).
//
// Both configurations are complete at their zero value, every zero field
// meaning its default, and read from JSON with the names in their tags;
// package limit takes them as they are (limit.Options.Adaptive,
// limit.Options.AdaptiveRate). Constructors validate their configuration
// and report every problem at once, each a *headroom.ConfigError of
// package "adaptive" (ConcurrencyConfig.Validate, RateConfig.Validate).
//
// # The throttle-driven adaptive rate limiter
//
// Rate is a token bucket in units (a request costs units; 0 never waits and
// changes nothing) with a FIFO queue of waiters, driven by the responses:
//
//	r, _ := adaptive.NewRate(adaptive.RateConfig{Controller: "cubic"}, now)
//	if ok, wait := r.TryAcquire(now, cost); !ok {
//		// refuse, or hold wait against a deadline, then:
//		id, _, ok := r.Enqueue(now, cost) // ok is false past MaxWait
//		// ... at r.Next(now): r.Dequeue(now) until it reports nothing
//	}
//	// ... send; then:
//	r.Release(now, sentAt, cost, adaptive.Throttled, retryAfter) // or Success
//	// Dropped and Ignored (a network error, a 5xx that is not a throttle)
//	// change nothing.
//
// The names, and the names a .NET rendering of the same design gives them:
//
//	RateConfig                MinUnitsPerMinute, MaxUnitsPerMinute, InitialUnitsPerMinute,
//	                          Burst (here BurstTime), MaxWait, DecreaseCooldown, MaxPause,
//	                          Enabled (here Disabled), the controller and the instance count;
//	                          QueueLimit is the shell's (limit.Options.QueueLimit)
//	RateController            IRateController: OnThrottled(RateState) float64,
//	                          OnSuccess(RateState) (float64, bool) (null is false)
//	RateState                 RateControllerState, plus SendRateAtLastDecrease and
//	                          PausedSinceLastDecrease so that CUBIC stays pure
//	AIMD, Cubic               the built-in controllers (Aimd.*, Cubic.* options)
//	InstanceCounter           the instance count source; RateConfig.Instances, a fixed count, without one
//	Rate.SetInstances         a change of the count: the whole budget's rate is kept
//
// Rates are units per minute. The options' rates are for the whole budget;
// a Rate and its controller work on this process's share (1/Instances of
// it), and WholeRate multiplies back.
//
// The rules, in brief (each method's comment says which it applies):
//
//   - The bucket fills at the rate and holds Burst of it, at least 1 unit.
//     A request larger than the bucket goes when the bucket is full and
//     drives it below zero. A rate change keeps the tokens up to the new
//     size and keeps the queue. A wait longer than MaxWait is refused, and
//     a waiter that has waited MaxWait leaves without its units.
//   - On a throttle: restart the increase clock and forget that requests
//     waited; cut on the first throttle, or after DecreaseCooldown for a
//     request sent after the last cut (never up, never below the minimum);
//     with a Retry-After, pause for min(Retry-After, MaxPause) and restart
//     the bucket empty.
//   - On a success: ask the controller, never during a pause. The built-in
//     controllers rise only if requests waited since the last change.
//   - Disabled admits everything and never changes the rate, but still
//     counts units and throttles.
package adaptive
