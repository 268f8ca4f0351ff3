package metrics

// The values the recorders write on the attributes named in package
// telemetry; docs/telemetry.md lists them for dashboard authors.

// LayerRateLimit is the value of AttrLayer: the limiter layer of httpx.
const LayerRateLimit = "rate_limit"

// Values of AttrBreakerState.
const (
	BreakerStateClosed   = "closed"
	BreakerStateHalfOpen = "half_open"
	BreakerStateOpen     = "open"
)

// Values of AttrFleetPolicy.
const (
	PolicyFailOpen   = "fail_open"
	PolicyFailClosed = "fail_closed"
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
