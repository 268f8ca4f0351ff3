package resilience

import (
	"context"
	"errors"
	"time"
)

// Run calls fn until it succeeds or the policy says stop, and returns what
// the last attempt returned. fn receives the attempt's context: it ends at
// min(Options.AttemptTimeout, time left on the overall deadline), or when
// the caller's ctx ends, or when the attempt returns. Put a limiter inside
// fn, so that each attempt takes its own permit:
//
//	v, err := resilience.Run(ctx, policy, func(ctx context.Context) (T, error) {
//		lease, err := lim.Acquire(ctx)
//		if err != nil {
//			return zero, err // *limit.RateLimitedError: Throttled, self-imposed
//		}
//		defer lease.Release()
//		return fetch(ctx)
//	})
//
// A refusal the classifier calls self-imposed stays one even when it wraps
// the attempt's deadline (a limiter whose queue wait that deadline ended):
// it is no *TimeoutError, and neither the breaker nor the budget counts it.
//
// Between attempts it waits on the curve the verdict picks (or the
// verdict's RetryAfter), never past the overall deadline. The error is nil
// on success; otherwise the last attempt's error (a *TimeoutError when it
// ran out its attempt timeout), a *BreakerOpenError when the breaker
// refused, the caller's context error when it was cancelled, or the
// policy's validation error. Try tells which, and lists the attempts.
//
// fn runs on the caller's goroutine; a panic in fn propagates to the caller
// after the runner has released what it held for the attempt.
func Run[T any](ctx context.Context, p *Policy, fn func(ctx context.Context) (T, error)) (T, error) {
	v, _, err := run(ctx, p, fn, nil)
	return v, err
}

// Try is Run that also reports every attempt and why the run stopped.
func Try[T any](ctx context.Context, p *Policy, fn func(ctx context.Context) (T, error)) Result[T] {
	var r Result[T]
	r.Value, r.Stop, r.Err = run(ctx, p, fn, &r.Attempts)
	return r
}

// run is Run and Try. rec, when not nil, receives the attempts.
func run[T any](ctx context.Context, p *Policy, fn func(context.Context) (T, error), rec *[]Attempt) (v T, stop StopReason, err error) {
	if stop, err = p.admit(ctx); stop != running {
		return v, stop, err
	}
	var r runState
	r.start(p, ctx, rec)
	n := 0
	for ; ; n++ {
		var a attempt
		if refused := r.begin(&a); refused != nil {
			err, stop = refused, StopBreakerOpen
			break
		}
		v, err = call(fn, a.ctx, a.ac, r.p.breaker, a.probe)
		var verdict Verdict
		if verdict, stop, err = r.judge(&a, n, err); stop != running {
			break
		}
		if stop = r.decide(n, verdict); stop != running {
			break
		}
		var cancelled error
		if stop, cancelled = r.wait(verdict, n); stop != running {
			if cancelled != nil {
				err = cancelled
			}
			break
		}
	}
	r.stop(stop, n)
	if stop == StopDeadline && err != nil && !errors.Is(err, context.DeadlineExceeded) {
		err = &deadlineError{err}
	}
	return v, stop, err
}

// deadlineError is the error of a run that stopped on its deadline after an
// attempt failed otherwise (the next delay would not end before the
// deadline, or fn returned after it without its context's error): it reads
// as the attempt's error, and matches both it and context.DeadlineExceeded.
type deadlineError struct{ err error }

func (e *deadlineError) Error() string   { return e.err.Error() }
func (e *deadlineError) Unwrap() []error { return []error{e.err, context.DeadlineExceeded} }

// call runs one attempt. Whatever happens in fn, a panic included, the
// attempt's context ends when it returns; on a panic the breaker's probe
// slot is freed (the panic is no evidence) before the panic goes on up the
// caller's goroutine.
func call[T any](fn func(context.Context) (T, error), actx context.Context, ac *attemptCtx, br *Breaker, probe bool) (v T, err error) {
	returned := false
	defer func() {
		if ac != nil {
			ac.end()
		}
		if !returned && br != nil {
			br.release(probe)
		}
	}()
	v, err = fn(actx)
	returned = true
	return v, err
}

// callerStop is the stop reason for the caller's context error e.
func callerStop(e error) StopReason {
	if errors.Is(e, context.DeadlineExceeded) {
		return StopDeadline
	}
	return StopCancelled
}

// sleep waits d, or until ctx ends; it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
