package resilience

import (
	"strconv"
	"time"
)

// StopReason says why a run stopped making attempts.
type StopReason uint8

// The stop reasons.
const (
	// StopSucceeded: an attempt succeeded.
	StopSucceeded StopReason = iota
	// StopAttemptsExhausted: the last allowed attempt (1 + Options.Retries)
	// failed with a retryable verdict. Its error is the run's error: when
	// every attempt was refused by a limiter, that is the last
	// *limit.RateLimitedError.
	StopAttemptsExhausted
	// StopPermanent: an attempt's verdict was Permanent.
	StopPermanent
	// StopDeadline: the overall deadline (Options.Timeout, or the caller's
	// context deadline, whichever is sooner) passed, or the next delay would
	// not end before it. The runner never sleeps past the deadline. The
	// run's error matches context.DeadlineExceeded (errors.Is), and the last
	// attempt's error too.
	StopDeadline
	// StopCancelled: the caller's context was cancelled.
	StopCancelled
	// StopBreakerOpen: the circuit breaker refused the next attempt; the
	// run's error is a *BreakerOpenError.
	StopBreakerOpen
	// StopBudgetExhausted: the retry budget refused the next retry; the run's
	// error is the last attempt's.
	StopBudgetExhausted
	// StopInvalid: the policy is invalid (or nil); no attempt was made and
	// the run's error is the validation error.
	StopInvalid
)

var stopNames = [...]string{"succeeded", "attempts_exhausted", "permanent", "deadline", "cancelled", "breaker_open", "budget_exhausted", "invalid"}

func (r StopReason) String() string {
	if int(r) < len(stopNames) {
		return stopNames[r]
	}
	return "stop(" + strconv.Itoa(int(r)) + ")"
}

// An Attempt is one call of fn.
type Attempt struct {
	Verdict Verdict
	// Err is what the attempt returned (wrapped in a *TimeoutError when the
	// attempt ran out its own timeout).
	Err error
	// Duration is how long fn ran.
	Duration time.Duration
	// Delay is how long the runner waited after this attempt before the
	// next one; 0 for the last attempt.
	Delay time.Duration
}

// Result is everything Try knows about a run.
type Result[T any] struct {
	// Value is what the last attempt returned (the zero value if none ran).
	Value T
	// Err is nil on success, else what Run would return: the last attempt's
	// error, a *BreakerOpenError, the caller's context error, or the
	// validation error.
	Err error
	// Attempts lists every attempt in order.
	Attempts []Attempt
	// Stop says why the run stopped.
	Stop StopReason
}
