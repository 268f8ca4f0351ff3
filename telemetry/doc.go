// Package telemetry names headroom's OpenTelemetry metrics: the instrument
// names, their units, the attribute keys and values, and ScopeName, the
// meter every instrument is created on. It holds names only; the limiters,
// the quota guard, the resilience runner and the HTTP layers record
// through them, on the meter provider each is given (nil means the global
// one, otel.GetMeterProvider).
//
// Names follow the OpenTelemetry naming rules: dotted, lower case, no unit
// in the name, one UCUM unit per metric. The OpenTelemetry Prometheus
// exporter renames them: dots become underscores, counters gain _total, a
// unit of s adds _seconds and {permit}/min adds _per_min.
//
// # Metrics
//
// Limiters, each with AttrLimiter and AttrLimiterKind (and in httpx
// AttrServerAddress, AttrServerPort and AttrLayer):
//
//	headroom.limiter.leases            counter    {lease}       by AttrOutcome, AttrReason
//	headroom.limiter.permits           counter    {permit}      the leases' permits, same attributes
//	headroom.limiter.wait.duration     histogram  s             time a granted caller queued
//	headroom.limiter.limit             gauge      {permit}      concurrency limit
//	headroom.limiter.rate              gauge      {permit}/min  rate limit
//	headroom.limiter.in_use            gauge      {permit}      permits in use
//	headroom.limiter.available         gauge      {permit}      permits free now
//	headroom.limiter.queue.length      gauge      {permit}      permits waiting
//	headroom.limiter.queue.limit       gauge      {permit}      permits the queue may hold
//	headroom.limiter.throttles         counter    {throttle}    throttles reported on leases
//	headroom.limiter.cuts              counter    {cut}         cuts of an adaptive limit
//	headroom.limiter.pauses            counter    {pause}       pauses after a Retry-After
//	headroom.limiter.instances         gauge      {instance}    adaptive rate: processes sharing it
//	headroom.limiter.budget_rate       gauge      {permit}/min  adaptive rate: the whole budget's rate
//	headroom.limiter.ceiling           gauge      {permit}/min  adaptive rate: the highest rate allowed
//	headroom.limiter.published_rate    gauge      {permit}/min  adaptive rate: the published quota
//	headroom.limiter.send_rate         gauge      {permit}/min  adaptive rate: measured send rate
//	headroom.limiter.paused            gauge      {pause}       adaptive rate: 1 while paused
//	headroom.limiter.latency.baseline  gauge      s             adaptive: the baseline latency
//	headroom.limiter.latency.round     gauge      s             adaptive: the latest round's figure
//
// The quota guard, with AttrQuotaKey:
//
//	headroom.quota.limit               gauge      {unit}        the published limit
//	headroom.quota.remaining           gauge      {unit}        the remaining allowance
//	headroom.quota.reset               gauge      s             time to the reset
//	headroom.quota.blocked             gauge      s             time until attempts go again
//	headroom.quota.refusals            counter    {refusal}     refusals by AttrReason
//
// The resilience runner, with AttrRunner:
//
//	headroom.runner.calls              counter    {call}        runs by AttrStop, AttrRetried
//	headroom.runner.call.duration      histogram  s             a run, start to result
//	headroom.runner.attempts           counter    {attempt}     by AttrVerdict, AttrSelfImposed
//	headroom.runner.attempt.duration   histogram  s             an attempt, with AttrAttempt
//	headroom.runner.retries            counter    {retry}       retries scheduled
//	headroom.runner.delay.duration     histogram  s             delays between attempts
//	headroom.runner.budget.denials     counter    {retry}       retries the budget refused
//	headroom.runner.breaker.state      gauge      {state}       0 closed, 1 half-open, 2 open
//	headroom.runner.breaker.transitions counter   {transition}  by AttrBreakerState entered
//
// Package fleet's calls to Redis, with AttrLimiter:
//
//	headroom.fleet.redis.duration      histogram  s             by AttrFleetOperation
//	headroom.fleet.redis.errors        counter    {error}       by AttrFleetOperation
//	headroom.fleet.fallbacks           counter    {request}     by AttrFleetPolicy
//	headroom.fleet.instances           gauge      {instance}    processes counted
//
// And httpx's attempts as the semantic convention's
// http.client.request.duration (histogram, s), with the convention's
// attributes (go.opentelemetry.io/otel/semconv).
//
// The values of AttrReason are the Reason constants: a limiter's denials
// (ReasonNoPermit, ReasonQueueFull, ReasonMaxWait, ReasonDeadline, which a
// *limit.RateLimitedError's Reason holds too) and the quota guard's
// refusals (ReasonReserve, ReasonBlocked, ReasonProbe, ReasonInFlight).
//
// Per-host series carry AttrServerAddress and AttrServerPort; past a
// client's bound of hosts (httpx.WithMaxHostSeries) they fold into one
// series whose AttrServerAddress is OtherHosts. Nothing is reported before
// it happens.
//
// A caller's recording span receives the events EventWait,
// EventThrottled, EventRetry and EventGuardHold; synchronous measurements
// carry the caller's context, so that a sampled trace rides on them as an
// exemplar. Package status serves every limiter, guard and breaker as a
// live page.
//
// docs/telemetry.md describes each in full, with the cardinality table,
// the log events and the PromQL for the common questions; docs/dashboards
// holds a Grafana dashboard, built by docs/dashboards/build, and alert
// rules with their tests.
package telemetry
