package resilience

import (
	"errors"
	"time"

	"github.com/headroom-go/headroom/limit"
)

// verdictError is an error that carries its own verdict: any error with a
// method Verdict() Verdict. DefaultClassify asks for it first, anywhere in
// the error's tree (errors.AsType), so a layer that knows what a failure
// means (httpx, for a status code) can say so without replacing the
// classifier.
//
// A result that is a failure (an HTTP response with status 503, say) is
// expressed as an error returned together with the value: fn returns
// (resp, &resilience.ThrottledError{...}). Run keeps the value of the last
// attempt, so the caller still sees it when the retries end.
type verdictError interface {
	error
	Verdict() Verdict
}

// ThrottledError marks Err as Throttled by the dependency itself (not
// self-imposed), for example a 429 or a 503 with a Retry-After header.
// RetryAfter is the server's hint, 0 when it gave none; when above 0 it
// replaces the throttled backoff curve.
type ThrottledError struct {
	Err        error
	RetryAfter time.Duration
}

func (e *ThrottledError) Error() string {
	s := "throttled"
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.RetryAfter > 0 {
		s += "; retry after " + e.RetryAfter.String()
	}
	return s
}

func (e *ThrottledError) Unwrap() error { return e.Err }

// Verdict is Throttled with the server's RetryAfter.
func (e *ThrottledError) Verdict() Verdict {
	return Verdict{Kind: Throttled, RetryAfter: max(e.RetryAfter, 0)}
}

// PermanentError marks Err as Permanent: the run stops after this attempt.
type PermanentError struct{ Err error }

func (e *PermanentError) Error() string {
	if e.Err == nil {
		return "permanent error"
	}
	return e.Err.Error()
}

func (e *PermanentError) Unwrap() error { return e.Err }

// Verdict is Permanent.
func (e *PermanentError) Verdict() Verdict { return Verdict{Kind: Permanent} }

// TimeoutError is the error of an attempt that ran out its own
// Options.AttemptTimeout while the caller's context and the overall
// deadline still had time. It is Transient. Err is what fn returned;
// errors.Is(err, context.DeadlineExceeded) holds through it. An attempt whose
// error the classifier calls self-imposed is not one, even if that error
// wraps the deadline: a limiter of ours that refused when the deadline ended
// its wait in our own queue never called the dependency.
type TimeoutError struct {
	Timeout time.Duration
	Err     error
}

func (e *TimeoutError) Error() string {
	return "resilience: attempt timed out after " + e.Timeout.String() + ": " + errString(e.Err)
}

func (e *TimeoutError) Unwrap() error { return e.Err }

// Verdict is Transient: a slow attempt may be followed by a fast one.
func (e *TimeoutError) Verdict() Verdict { return Verdict{Kind: Transient} }

// retryAfterer is any error that says when to come back.
type retryAfterer interface {
	error
	RetryAfter() time.Duration
}

// DefaultClassify is the classifier a Policy uses unless Options.Classify
// replaces it. It looks through the error's tree (errors.AsType) and takes
// the first rule that matches:
//
//   - nil: Success.
//   - an error with a method Verdict() Verdict (*ThrottledError,
//     *PermanentError, *TimeoutError, or an error of the caller's own): its
//     Verdict.
//   - *limit.CostError: Permanent; no wait makes such a cost grantable.
//   - *limit.RateLimitedError: Throttled, SelfImposed, with the limiter's
//     RetryAfter. The limiter refused before anything left the process.
//   - *BreakerOpenError (a breaker inside fn, such as a nested policy's):
//     Throttled, SelfImposed, with the breaker's RetryAfter; it too refused
//     without calling the dependency.
//   - an error with a method RetryAfter() time.Duration: Throttled, with that
//     hint.
//   - anything else: Transient. (Polly's retry handles every exception but
//     cancellation the same way; the caller's cancellation never reaches the
//     classifier, Run stops on it first.)
func DefaultClassify(err error) Verdict {
	if err == nil {
		return Verdict{Kind: Success}
	}
	if e, ok := errors.AsType[verdictError](err); ok {
		return e.Verdict()
	}
	if _, ok := errors.AsType[*limit.CostError](err); ok {
		return Verdict{Kind: Permanent}
	}
	if e, ok := errors.AsType[*limit.RateLimitedError](err); ok {
		return Verdict{Kind: Throttled, SelfImposed: true, RetryAfter: max(e.RetryAfter, 0)}
	}
	if e, ok := errors.AsType[*BreakerOpenError](err); ok {
		return Verdict{Kind: Throttled, SelfImposed: true, RetryAfter: max(e.RetryAfter, 0)}
	}
	if e, ok := errors.AsType[retryAfterer](err); ok {
		return Verdict{Kind: Throttled, RetryAfter: max(e.RetryAfter(), 0)}
	}
	return Verdict{Kind: Transient}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}
