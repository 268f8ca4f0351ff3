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
	v, err, _ := run(ctx, p, fn, nil)
	return v, err
}

// Try is Run that also reports every attempt and why the run stopped.
func Try[T any](ctx context.Context, p *Policy, fn func(ctx context.Context) (T, error)) Result[T] {
	var r Result[T]
	r.Value, r.Err, r.Stop = run(ctx, p, fn, &r.Attempts)
	return r
}

// run is Run and Try. rec, when not nil, receives the attempts.
func run[T any](ctx context.Context, p *Policy, fn func(context.Context) (T, error), rec *[]Attempt) (v T, err error, stop StopReason) {
	if p == nil {
		return v, ErrNilPolicy, StopInvalid
	}
	if p.err != nil {
		return v, p.err, StopInvalid
	}
	if e := ctx.Err(); e != nil {
		stop = callerStop(e)
		p.tel.Stop(ctx, int(stop), false, 0, false)
		return v, e, stop
	}
	o := &p.o
	br, bu := o.Breaker, o.Budget

	// The clock is read only when something needs it: on a fast machine
	// time.Now costs little, but on some virtual machines it is the larger
	// part of the runner's overhead. A run whose first attempt succeeds reads
	// it once: before the attempt when timeouts need it, and then the
	// breaker's window and the budget's slice take the attempt's start as its
	// stamp (their slices are seconds long); otherwise after the attempt.
	// Only a slow-call threshold and Try's durations need both readings.
	slow := br != nil && br.opts.SlowCallThreshold > 0
	timed := p.tel.Timed(ctx) // the call and attempt durations
	needStart := o.Timeout > 0 || o.AttemptTimeout > 0 || rec != nil || slow || timed
	needEnd := rec != nil || slow || timed ||
		(!needStart && ((br != nil && br.needsTime()) || (bu != nil && bu.deposit > 0)))
	var now time.Time
	if needStart {
		now = time.Now()
	}
	start := now
	var deadline time.Time // the overall deadline, when hasDeadline
	hasDeadline := false
	if o.Timeout > 0 {
		deadline, hasDeadline = now.Add(o.Timeout), true
	}
	callerDeadline, callerHas := ctx.Deadline()
	if callerHas && (!hasDeadline || callerDeadline.Before(deadline)) {
		deadline, hasDeadline = callerDeadline, true
	}

	var curves *[2]curve // Transient, Throttled; allocated on the first retry
	deposited := false
	n := 0
	for ; ; n++ {
		probe := false
		if br != nil {
			var e error
			if probe, e = br.Allow(now); e != nil {
				err, stop = e, StopBreakerOpen
				break
			}
		}

		// The attempt's context: its deadline is the sooner of its own
		// timeout and the overall deadline. The caller's context serves when
		// it already ends by then.
		actx := ctx
		var ac *attemptCtx
		own := false // the attempt's own timeout is the binding one
		if o.AttemptTimeout > 0 || hasDeadline {
			ad := deadline
			if o.AttemptTimeout > 0 {
				if t := now.Add(o.AttemptTimeout); !hasDeadline || t.Before(deadline) {
					ad, own = t, true
				}
			}
			if !callerHas || ad.Before(callerDeadline) {
				ac = &attemptCtx{parent: ctx, deadline: ad}
				actx = ac
			}
		}

		v, err = call(fn, actx, ac, br, probe)
		var end time.Time
		var took time.Duration
		if needEnd || err != nil {
			end = time.Now()
			if !now.IsZero() {
				took = end.Sub(now)
			}
		}

		var verdict Verdict
		evidence := true // whether the breaker may learn from the attempt
		stop = StopSucceeded
		switch {
		case err == nil:
		case ctx.Err() != nil:
			// The caller's cancellation or deadline: stop at once, and teach
			// the breaker nothing.
			e := ctx.Err()
			verdict, evidence, stop = p.classify(err), false, callerStop(e)
			if !errors.Is(err, e) {
				err = errors.Join(e, err)
			}
		default:
			verdict = p.classify(err)
			// A self-imposed refusal stays one even when it wraps the
			// deadline that ended its wait in our own queue: the dependency
			// never saw the attempt, so it is no timeout of the dependency's.
			if ac == nil || end.Before(ac.deadline) || !errors.Is(err, context.DeadlineExceeded) {
				break
			}
			if verdict.SelfImposed {
				if !own {
					stop = StopDeadline // the policy's Timeout ended the wait: no time is left
				}
				break
			}
			if own {
				verdict = Verdict{Kind: Transient}
				err = &TimeoutError{Timeout: o.AttemptTimeout, Err: err}
			} else {
				// The policy's overall Timeout ran out during the attempt.
				verdict, evidence, stop = Verdict{Kind: Transient}, false, StopDeadline
			}
		}

		stamp := end // when the breaker and the budget count the attempt
		if stamp.IsZero() {
			stamp = now
		}
		if br != nil {
			if evidence {
				br.Record(stamp, probe, verdict.Kind, took)
			} else {
				br.release(probe)
			}
		}
		if bu != nil && !deposited && !verdict.SelfImposed {
			bu.Deposit(stamp)
			deposited = true
		}
		p.tel.Attempt(ctx, int(verdict.Kind), verdict.SelfImposed, n+1, took, timed)
		if rec != nil {
			*rec = append(*rec, Attempt{Verdict: verdict, Err: err, Duration: took})
		}
		now = end

		switch {
		case stop != StopSucceeded:
		case verdict.Kind == Success:
		case verdict.Kind == Permanent:
			stop = StopPermanent
		case n >= o.Retries:
			stop = StopAttemptsExhausted
		}
		if stop != StopSucceeded || verdict.Kind == Success {
			break
		}

		// The delay: the verdict's hint, else its curve; capped by
		// MaximumDelay, and never past the deadline.
		d := max(verdict.RetryAfter, 0)
		if !verdict.hinted() {
			if curves == nil {
				curves = new([2]curve)
			}
			if verdict.Kind == Throttled {
				d = curves[1].next(&o.ThrottledBackoff)
			} else {
				d = curves[0].next(&o.Backoff)
			}
		}
		if o.MaximumDelay > 0 {
			d = min(d, o.MaximumDelay)
		}
		if hasDeadline && !now.Add(d).Before(deadline) {
			stop = StopDeadline
			break
		}
		if bu != nil && !verdict.SelfImposed && !bu.TryWithdraw(now) {
			p.tel.BudgetDenied(ctx)
			stop = StopBudgetExhausted
			break
		}
		if rec != nil {
			(*rec)[len(*rec)-1].Delay = d
		}
		p.tel.Retry(ctx, int(verdict.Kind), verdict.SelfImposed, d)
		if d > 0 && !sleep(ctx, d) {
			e := ctx.Err()
			err, stop = e, callerStop(e)
			break
		}
		now = time.Now()
	}
	var took time.Duration
	if timed {
		took = time.Since(start)
	}
	p.tel.Stop(ctx, int(stop), n > 0, took, timed)
	return v, err, stop
}

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
