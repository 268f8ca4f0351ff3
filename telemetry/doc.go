// Package telemetry holds headroom's OpenTelemetry instruments: their names,
// units and attributes, in one place (names.go), and the recorders the rest
// of the module reports through. A limiter records through a *Limiter made
// by NewLimiter; the resilience runner through a *Runner made by NewRunner,
// and its circuit breaker through a *Breaker made by NewBreaker. Nothing
// outside this package names an instrument.
//
// Every instrument is created on the meter named ScopeName of the meter
// provider the caller passes; a nil provider means the global one,
// otel.GetMeterProvider.
//
// # Instruments
//
// Limiters. Every one carries headroom.limiter (the limiter's name) and
// headroom.limiter.kind (per_second, per_window, concurrency, adaptive,
// adaptive_rate); the limiters httpx makes per host also carry headroom.host.
//
//	Name                            Instrument  Unit        Attributes and meaning
//	headroom.limiter.leases         counter     {lease}     headroom.outcome = acquired | denied;
//	                                                        denied also headroom.reason = no_permit |
//	                                                        queue_full | max_wait | deadline
//	headroom.limiter.wait.duration  histogram   s           how long a caller waited in the queue;
//	                                                        recorded only for callers that queued
//	headroom.limiter.limit          gauge       {permit}    the concurrency limit (concurrency,
//	                                                        adaptive) or the rate in permits per
//	                                                        minute (per_second, per_window,
//	                                                        adaptive_rate); once the limiter sets it
//	headroom.limiter.queue.length   gauge       {permit}    permits held by waiting callers
//	headroom.limiter.throttles      counter     {throttle}  throttles reported on leases
//	headroom.limiter.cuts           counter     {cut}       cuts of an adaptive limit
//	headroom.limiter.pauses         counter     {pause}     pauses after a Retry-After
//
// The leases of all five series (acquired and each reason) are reported
// from the first collection, so rates start at zero; throttles, cuts and
// pauses are reported from the first collection by the adaptive kinds and
// by the others once they are non-zero. The wait histogram's buckets run
// from 1 ms to 120 s.
//
// The resilience runner. Every instrument carries headroom.runner (the
// policy's name).
//
//	Name                            Instrument  Unit        Attributes and meaning
//	headroom.runner.calls           counter     {call}      runs, by headroom.stop = succeeded |
//	                                                        attempts_exhausted | permanent | deadline |
//	                                                        cancelled | breaker_open |
//	                                                        budget_exhausted | invalid
//	headroom.runner.attempts        counter     {attempt}   headroom.verdict = success | transient |
//	                                                        throttled | permanent; throttled also
//	                                                        headroom.self_imposed (a limiter refused)
//	headroom.runner.retries         counter     {retry}     retries scheduled, by headroom.verdict
//	headroom.runner.delay.duration  histogram   s           delays slept between attempts
//	headroom.runner.breaker.state   gauge       1           0 closed, 1 half-open, 2 open
//	headroom.runner.budget.denials  counter     {retry}     retries the retry budget refused
//
// # Cost
//
// A Limiter's fast-path methods cost one atomic operation and touch nothing
// of OpenTelemetry: counts and gauges live in atomics, and one callback per
// Limiter, registered with the meter, reads them when the meter collects.
// The hot counters are striped, so parallel callers do not contend on one
// cache line. Only Waited, on the slow path of a caller that queued,
// records on a synchronous histogram, without allocating.
//
// # Lifetime
//
// The registered callback keeps a Limiter reachable from the meter
// provider until Close unregisters it. An owner that may be dropped without
// being closed should arrange for Close itself:
//
//	runtime.AddCleanup(owner, func(m *telemetry.Limiter) { m.Close() }, m)
//
// or, the same, m.CloseWhenUnreachable(owner). The Limiter must not
// reference its owner.
//
// # Failures
//
// Telemetry never fails a limiter: when an instrument cannot be created,
// NewLimiter reports the error through otel.Handle and returns a Limiter that
// records nothing. A nil *Limiter records nothing either.
package telemetry
