package telemetry

// ScopeName is the instrumentation scope every headroom instrument is created
// under: the name passed to metric.MeterProvider.Meter.
const ScopeName = "github.com/headroom-go/headroom"

// Limiter instruments. Each carries AttrLimiter and AttrLimiterKind, and in
// httpx AttrHost.
const (
	// LeasesName counts permits asked for, unit "{lease}", with AttrOutcome
	// OutcomeAcquired or OutcomeDenied; a denied lease also carries
	// AttrReason.
	LeasesName = "headroom.limiter.leases"

	// WaitDurationName is the histogram of how long a caller waited in a
	// limiter's queue before it was granted, in seconds (unit "s"). It is
	// recorded only for a caller that queued and was granted; one refused
	// or cancelled after queueing is counted by LeasesName, not timed.
	WaitDurationName = "headroom.limiter.wait.duration"

	// LimitName is the gauge of a limiter's limit, unit "{permit}": the
	// concurrency limit for "concurrency" and "adaptive", the rate in
	// permits per minute for the rate limiters ("per_second", "per_window",
	// "adaptive_rate"). It is reported once the limiter has set it.
	LimitName = "headroom.limiter.limit"

	// QueueLengthName is the gauge of permits held by callers waiting in a
	// limiter's queue, unit "{permit}".
	QueueLengthName = "headroom.limiter.queue.length"

	// ThrottlesName counts throttles reported on leases (a 429, a 503, a
	// quota refusal), unit "{throttle}".
	ThrottlesName = "headroom.limiter.throttles"

	// CutsName counts the cuts an adaptive rate limiter made to its rate,
	// unit "{cut}".
	CutsName = "headroom.limiter.cuts"

	// PausesName counts the pauses an adaptive rate limiter took after a
	// Retry-After, unit "{pause}".
	PausesName = "headroom.limiter.pauses"
)

// Resilience runner instruments. Each carries AttrRunner.
const (
	// CallsName counts runs (calls of resilience.Run or Try), unit "{call}",
	// with AttrStop: why the run stopped.
	CallsName = "headroom.runner.calls"

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

	// BreakerStateName is the gauge of a circuit breaker's state, unit "1":
	// BreakerClosed, BreakerHalfOpen or BreakerOpen.
	BreakerStateName = "headroom.runner.breaker.state"

	// BudgetDenialsName counts retries the retry budget refused, unit
	// "{retry}".
	BudgetDenialsName = "headroom.runner.budget.denials"
)

// Attribute keys.
const (
	// AttrLimiter is the limiter's name, as in limit.Limiter.Name.
	AttrLimiter = "headroom.limiter"

	// AttrLimiterKind is the limiter's shape: KindPerSecond, KindPerWindow,
	// KindConcurrency, KindAdaptive or KindAdaptiveRate.
	AttrLimiterKind = "headroom.limiter.kind"

	// AttrHost is the host a limiter guards; httpx adds it to its per-host
	// limiters.
	AttrHost = "headroom.host"

	// AttrOutcome is OutcomeAcquired or OutcomeDenied, on LeasesName.
	AttrOutcome = "headroom.outcome"

	// AttrReason says why a lease was denied: ReasonNoPermit,
	// ReasonQueueFull, ReasonMaxWait or ReasonDeadline.
	AttrReason = "headroom.reason"

	// AttrRunner is the resilience runner's (the policy's) name.
	AttrRunner = "headroom.runner"

	// AttrVerdict is an attempt's verdict kind: VerdictSuccess,
	// VerdictTransient, VerdictThrottled or VerdictPermanent.
	AttrVerdict = "headroom.verdict"

	// AttrSelfImposed is true on a throttled attempt that one of our own
	// limiters refused, before anything reached the dependency.
	AttrSelfImposed = "headroom.self_imposed"

	// AttrStop is why a run stopped, on CallsName: one of the Stop values.
	AttrStop = "headroom.stop"
)

// Values of AttrLimiterKind.
const (
	KindPerSecond    = "per_second"
	KindPerWindow    = "per_window"
	KindConcurrency  = "concurrency"
	KindAdaptive     = "adaptive"
	KindAdaptiveRate = "adaptive_rate"
)

// Values of AttrOutcome.
const (
	OutcomeAcquired = "acquired"
	OutcomeDenied   = "denied"
)

// Values of AttrReason; they match limit's Reason constants.
const (
	ReasonNoPermit  = "no_permit"  // no permit free and queueing is off
	ReasonQueueFull = "queue_full" // the queue was full
	ReasonMaxWait   = "max_wait"   // the wait would exceed the maximum wait
	ReasonDeadline  = "deadline"   // the wait would outlast the context's deadline
)

// Values of AttrVerdict.
const (
	VerdictSuccess   = "success"
	VerdictTransient = "transient"
	VerdictThrottled = "throttled"
	VerdictPermanent = "permanent"
)

// Values of AttrStop, in the order of resilience.StopReason.
const (
	StopSucceeded         = "succeeded"
	StopAttemptsExhausted = "attempts_exhausted"
	StopPermanent         = "permanent"
	StopDeadline          = "deadline"
	StopCancelled         = "cancelled"
	StopBreakerOpen       = "breaker_open"
	StopBudgetExhausted   = "budget_exhausted"
	StopInvalid           = "invalid"
)

// Values of BreakerStateName.
const (
	BreakerClosed   = 0
	BreakerHalfOpen = 1
	BreakerOpen     = 2
)
