package telemetry

// ScopeName is the instrumentation scope every headroom instrument is created
// under: the name passed to metric.MeterProvider.Meter.
const ScopeName = "github.com/headroom-go/headroom"

// Limiter instruments. Each carries AttrLimiter and AttrLimiterKind, and in
// httpx the host's AttrServerAddress and AttrServerPort, and AttrLayer.
const (
	// LeasesName counts calls that asked a limiter for a lease, unit
	// "{lease}", with AttrOutcome "acquired" or "denied"; a denied
	// lease also carries AttrReason. One AcquireN(5) is one lease.
	LeasesName = "headroom.limiter.leases"

	// PermitsName counts the permits (units) those leases asked for, unit
	// "{permit}", with the same attributes as LeasesName: one AcquireN(5)
	// is five permits. Charted against a published quota, it is the units
	// spent.
	PermitsName = "headroom.limiter.permits"

	// WaitDurationName is the histogram of how long a caller waited in a
	// limiter's queue before it was granted, in seconds (unit "s"). It is
	// recorded only for a caller that queued and was granted; one refused
	// or cancelled after queueing is counted by LeasesName, not timed.
	WaitDurationName = "headroom.limiter.wait.duration"

	// LimitName is the gauge of a concurrency limit, unit "{permit}", for
	// the kinds "concurrency" and "adaptive".
	LimitName = "headroom.limiter.limit"

	// RateName is the gauge of a rate limit, unit "{permit}/min", for the
	// kinds "per_second", "per_window" and "adaptive_rate" (this process's
	// share of the budget, for the adaptive rate).
	RateName = "headroom.limiter.rate"

	// InUseName is the gauge of permits in use, unit "{permit}": held by
	// leases not yet released for the concurrency kinds, spent within the
	// burst or window for the rate kinds. Read when the meter collects.
	InUseName = "headroom.limiter.in_use"

	// AvailableName is the gauge of permits a caller could take now, unit
	// "{permit}". InUseName plus AvailableName is the capacity: the
	// concurrency limit, the burst or the window's permits.
	AvailableName = "headroom.limiter.available"

	// QueueLengthName is the gauge of permits held by callers waiting in a
	// limiter's queue, unit "{permit}".
	QueueLengthName = "headroom.limiter.queue.length"

	// QueueLimitName is the gauge of the permits a limiter's queue may
	// hold, unit "{permit}"; 0 when the limiter does not queue.
	QueueLimitName = "headroom.limiter.queue.limit"

	// ThrottlesName counts throttles reported on leases (a 429, a 503, a
	// quota refusal), unit "{throttle}", for every kind.
	ThrottlesName = "headroom.limiter.throttles"

	// CutsName counts the cuts an adaptive limiter made to its limit or
	// rate, unit "{cut}".
	CutsName = "headroom.limiter.cuts"

	// PausesName counts the pauses an adaptive rate limiter took after a
	// Retry-After, unit "{pause}".
	PausesName = "headroom.limiter.pauses"
)

// Adaptive rate limiter gauges, read when the meter collects.
const (
	// InstancesName is how many processes share the budget, unit
	// "{instance}".
	InstancesName = "headroom.limiter.instances"

	// BudgetRateName is the whole budget's rate, all instances together,
	// unit "{permit}/min"; RateName is this process's share of it.
	BudgetRateName = "headroom.limiter.budget_rate"

	// CeilingName is the highest rate the limiter may reach, its maximum
	// or its share of the published quota, unit "{permit}/min".
	CeilingName = "headroom.limiter.ceiling"

	// PublishedRateName is the quota the dependency publishes, converted
	// to a rate for the whole budget, unit "{permit}/min"; 0 when none is
	// known.
	PublishedRateName = "headroom.limiter.published_rate"

	// SendRateName is the measured send rate, unit "{permit}/min".
	SendRateName = "headroom.limiter.send_rate"

	// PausedName is 1 while the limiter is paused after a Retry-After and
	// 0 otherwise, unit "{pause}".
	PausedName = "headroom.limiter.paused"
)

// Adaptive concurrency limit gauges, read when the meter collects.
const (
	// LatencyBaselineName is the baseline latency in use, the 10th
	// percentile of recent calls under its ceiling, in seconds; reported
	// once there is one.
	LatencyBaselineName = "headroom.limiter.latency.baseline"

	// LatencyRoundName is the fastest call of the latest completed round,
	// the figure compared with a multiple of the baseline, in seconds.
	LatencyRoundName = "headroom.limiter.latency.round"
)

// Resilience runner instruments. Each carries AttrRunner.
const (
	// CallsName counts runs (calls of resilience.Run or Try), unit "{call}",
	// with AttrStop, why the run stopped, and AttrRetried, whether it
	// retried: succeeded without a retry, succeeded after retries and
	// failed after retries are three series.
	CallsName = "headroom.runner.calls"

	// CallDurationName is the histogram of a run's duration from its start
	// to its result, retries and delays included, in seconds, with
	// AttrStop and AttrRetried.
	CallDurationName = "headroom.runner.call.duration"

	// AttemptDurationName is the histogram of one attempt's duration, in
	// seconds, with AttrVerdict, AttrSelfImposed (throttled attempts) and
	// AttrAttempt, the attempt's number from 1.
	AttemptDurationName = "headroom.runner.attempt.duration"

	// AttemptsName counts attempts, unit "{attempt}", with AttrVerdict and,
	// for throttled attempts, AttrSelfImposed.
	AttemptsName = "headroom.runner.attempts"

	// RetriesName counts retries scheduled, unit "{retry}", with AttrVerdict
	// of the attempt that is retried.
	RetriesName = "headroom.runner.retries"

	// DelayDurationName is the histogram of the delays slept between
	// attempts, in seconds (unit "s"), with AttrVerdict of the attempt
	// before the delay.
	DelayDurationName = "headroom.runner.delay.duration"

	// BreakerStateName is the gauge of a circuit breaker's state, unit
	// "{state}": 0, 1 or 2. A state
	// held for less than a scrape interval shows only in
	// BreakerTransitionsName.
	BreakerStateName = "headroom.runner.breaker.state"

	// BreakerTransitionsName counts a breaker's changes of state, unit
	// "{transition}", with AttrBreakerState, the state entered.
	BreakerTransitionsName = "headroom.runner.breaker.transitions"

	// BudgetDenialsName counts retries the retry budget refused, unit
	// "{retry}".
	BudgetDenialsName = "headroom.runner.budget.denials"
)

// Quota guard instruments. Each carries AttrQuotaKey, for at most 100 keys
// at a time: the gauges leave the guard's other keys out, the refusals
// count them as "_other".
const (
	// QuotaLimitName is the gauge of the published limit, unit "{unit}":
	// the units the dependency grants per window.
	QuotaLimitName = "headroom.quota.limit"

	// QuotaRemainingName is the gauge of the remaining allowance the
	// dependency published, unit "{unit}".
	QuotaRemainingName = "headroom.quota.remaining"

	// QuotaResetName is the gauge of the time until the published window
	// resets, in seconds; 0 once it has.
	QuotaResetName = "headroom.quota.reset"

	// QuotaBlockedName is the gauge of the time until the guard lets
	// attempts through again, in seconds; 0 when it is not blocking.
	QuotaBlockedName = "headroom.quota.blocked"

	// QuotaRefusalsName counts attempts the guard refused, unit
	// "{refusal}", with AttrReason: "reserve" (the remaining allowance
	// is inside the reserve), "blocked" (a Retry-After or a backoff
	// holds the key), "probe" (past a reset, a probe is out) or
	// "in_flight" (no in-flight slot is free). A refusal is an attempt
	// the guard turned away: at once, or when its wait would outlast the
	// deadline or MaxWait, or when the deadline ended it.
	QuotaRefusalsName = "headroom.quota.refusals"
)

// HTTPClientRequestDurationName is the OpenTelemetry semantic convention's
// http.client.request.duration: the duration of each HTTP attempt httpx
// sends, in seconds, with the convention's attributes
// (go.opentelemetry.io/otel/semconv): http.request.method,
// http.response.status_code when a response came, server.address,
// server.port, and error.type when it failed. It counts what reached the
// transport, so it is the dependency's view: attempts our limiters refused
// are not in it.
const HTTPClientRequestDurationName = "http.client.request.duration"

// Attribute keys.
const (
	// AttrLimiter is the limiter's name, as in limit.Limiter.Name.
	AttrLimiter = "headroom.limiter"

	// AttrLimiterKind is the limiter's shape: "per_second", "per_window",
	// "concurrency", "adaptive" or "adaptive_rate".
	AttrLimiterKind = "headroom.limiter.kind"

	// AttrServerAddress is the semantic convention's server.address: the
	// host name or IP address a per-host series is about, on every per-host
	// family (limiters, the quota guard keyed by host, HTTP durations), so
	// that the families join on it. Past a client's host series bound it is
	// OtherHosts.
	AttrServerAddress = "server.address"

	// AttrServerPort is the semantic convention's server.port: the port of
	// the host a per-host series is about, explicit or the scheme's default.
	// A folded series (AttrServerAddress OtherHosts) has none.
	AttrServerPort = "server.port"

	// AttrOutcome is "acquired" or "denied", on LeasesName.
	AttrOutcome = "headroom.outcome"

	// AttrReason says why a lease was denied, or an attempt the quota
	// guard refused: one of the Reason values below.
	AttrReason = "headroom.reason"

	// AttrRunner is the resilience runner's (the policy's) name.
	AttrRunner = "headroom.runner"

	// AttrVerdict is an attempt's verdict kind: "success",
	// "transient", "throttled" or "permanent".
	AttrVerdict = "headroom.verdict"

	// AttrSelfImposed is true on a throttled attempt that one of our own
	// limiters refused, before anything reached the dependency.
	AttrSelfImposed = "headroom.self_imposed"

	// AttrStop is why a run stopped, on CallsName: one of the Stop values.
	AttrStop = "headroom.stop"

	// AttrRetried is true on a run that made more than one attempt.
	AttrRetried = "headroom.retried"

	// AttrAttempt is an attempt's number, from 1.
	AttrAttempt = "headroom.attempt"

	// AttrBreakerState is the state a breaker entered: "closed",
	// "half_open" or "open".
	AttrBreakerState = "headroom.breaker.state"

	// AttrLayer is the httpx layer a limiter belongs to: "rate_limit".
	// Two layers on one host are two series (told apart by
	// AttrLimiterKind, and within a kind by AttrLimiter), and a sum over
	// them counts each call once per layer.
	AttrLayer = "headroom.layer"

	// AttrQuotaKey is the quota guard's key: the host, or the key the
	// caller chose.
	AttrQuotaKey = "headroom.quota.key"
)

// Span events, added to the caller's span when it is recording.
const (
	// EventWait is a wait for permits in a limiter's queue, with
	// AttrLimiter and AttrWaitDuration.
	EventWait = "headroom.limiter.wait"

	// EventThrottled is an attempt that was throttled, with AttrAttempt,
	// AttrSelfImposed and, when the answer gave one, AttrRetryAfter.
	EventThrottled = "headroom.attempt.throttled"

	// EventRetry is a retry scheduled, with AttrAttempt (the attempt
	// retried), AttrVerdict and AttrRetryDelay.
	EventRetry = "headroom.retry"

	// EventGuardHold is an attempt the quota guard held before letting it
	// go, with AttrQuotaKey and AttrWaitDuration.
	EventGuardHold = "headroom.quota.hold"
)

// Span event attributes.
const (
	// AttrWaitDuration is how long a wait or hold lasted, in seconds.
	AttrWaitDuration = "headroom.wait.duration"

	// AttrRetryAfter is a throttle's Retry-After, in seconds.
	AttrRetryAfter = "headroom.retry_after"

	// AttrRetryDelay is the delay before a retry, in seconds.
	AttrRetryDelay = "headroom.retry.delay"
)

// OtherHosts is AttrServerAddress on the one series that stands for every
// host past a client's host series bound (httpx.WithMaxHostSeries), and
// AttrLimiter on it when the limiters are named after their hosts: their
// counts add up there, so that any number of hosts makes a bounded number
// of series, and says so, rather than reaching the SDK's cardinality limit
// (where the OpenTelemetry SDK folds every attribute into
// otel.metric.overflow).
const OtherHosts = "_other"

// The values of AttrReason. The first five say why a limiter denied a
// lease, and are a *limit.RateLimitedError's Reason too; the last four say
// what held an attempt the quota guard refused (QuotaRefusalsName).
const (
	ReasonNoPermit  = "no_permit"  // no permit free, and no queue to wait in
	ReasonQueueFull = "queue_full" // the queue holds its QueueLimit already
	ReasonMaxWait   = "max_wait"   // the wait would be longer than allowed
	ReasonDeadline  = "deadline"   // the context ends before a permit would be free
	ReasonShed      = "shed"       // a waiter of a lower priority, refused to make room for a higher one
	ReasonReserve   = "reserve"    // the remaining allowance is inside the reserve
	ReasonBlocked   = "blocked"    // a Retry-After or a backoff holds the key
	ReasonProbe     = "probe"      // past a reset, one probe at a time until figures return
	ReasonInFlight  = "in_flight"  // every in-flight slot of the key is taken
)
