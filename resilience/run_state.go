package resilience

import (
	"context"
	"errors"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// running is the stop reason of a run that goes on; it never leaves run.
const running StopReason = 255

// runState is one run's progress: what it read of the clock, its deadline,
// its curves. It lives on run's stack.
type runState struct {
	p   *Policy
	ctx context.Context
	rec *[]Attempt

	// The clock is read only when something needs it: on a fast machine
	// time.Now costs little, but on some virtual machines it is the larger
	// part of the runner's overhead. A run whose first attempt succeeds reads
	// it once: before the attempt when timeouts need it, and then the
	// breaker's window and the budget's slice take the attempt's start as its
	// stamp (their slices are seconds long); otherwise after the attempt.
	// Only a slow-call threshold and Try's durations need both readings.
	needEnd bool
	now     time.Time // the clock as last read; zero until read
	// timed says a reader wants the call and attempt durations, which
	// need the clock before and after each attempt; began is when the run
	// began, read only then.
	timed bool
	began time.Time

	deadline       time.Time // the overall deadline, when hasDeadline
	hasDeadline    bool
	callerDeadline time.Time // the caller's, when callerHas
	callerHas      bool

	curves    *[2]curve // Transient, Throttled; allocated on the first retry
	deposited bool      // the budget has the call's deposit
}

// attempt is one attempt: its context, whether it is the breaker's probe,
// and when it ended.
type attempt struct {
	ctx   context.Context
	ac    *attemptCtx // the attempt's own context; nil when the caller's serves
	own   bool        // the attempt's own timeout is the binding one
	probe bool
	end   time.Time // zero unless read
	took  time.Duration
}

// admit returns why a run with p cannot start, and its error, or running.
func (p *Policy) admit(ctx context.Context) (StopReason, error) {
	if p == nil {
		return StopInvalid, errNilPolicy()
	}
	if e := ctx.Err(); e != nil {
		return p.ended(ctx, e)
	}
	return running, nil
}

// errNilPolicy is what a run with a nil *Policy returns.
func errNilPolicy() error {
	l := problems.New("resilience")
	l.Add("Policy", nil, "a policy built by HTTP or Default")
	return l.Err()
}

// ended is the stop of a run whose caller's context had ended, with e,
// before it began.
func (p *Policy) ended(ctx context.Context, e error) (StopReason, error) {
	stop := callerStop(e)
	p.tel.Stop(ctx, int(stop), false, 0, false)
	return stop, e
}

// start begins a run of p: it reads the clock if the run needs it now and
// settles the overall deadline. r is zero; it is set in place, as a copy
// of it costs the fast path more than the rest of start.
func (r *runState) start(p *Policy, ctx context.Context, rec *[]Attempt) {
	r.p, r.ctx, r.rec = p, ctx, rec
	br, bu := p.breaker, p.budget
	slow := br != nil && br.opts.SlowCallThreshold > 0
	r.timed = p.tel.Timed(ctx)
	needStart := p.timeout > 0 || p.attemptTimeout > 0 || rec != nil || slow || r.timed
	r.needEnd = rec != nil || slow || r.timed ||
		(!needStart && ((br != nil && br.needsTime()) || (bu != nil && bu.deposit > 0)))
	if needStart {
		r.now = time.Now()
	}
	r.began = r.now
	if p.timeout > 0 {
		r.deadline, r.hasDeadline = r.now.Add(p.timeout), true
	}
	r.callerDeadline, r.callerHas = ctx.Deadline()
	if r.callerHas && (!r.hasDeadline || r.callerDeadline.Before(r.deadline)) {
		r.deadline, r.hasDeadline = r.callerDeadline, true
	}
}

// begin asks the breaker to let attempt a, which is zero, through, and
// gives it its context. The error is the breaker's refusal.
func (r *runState) begin(a *attempt) (err error) {
	a.ctx = r.ctx
	if br := r.p.breaker; br != nil {
		if a.probe, err = br.allow(r.now); err != nil {
			return err
		}
	}
	if r.p.attemptTimeout > 0 || r.hasDeadline {
		r.bound(a)
	}
	return nil
}

// bound gives attempt a its own context when it needs one: its deadline is
// the sooner of its own timeout and the overall deadline. The caller's
// context serves when it already ends by then.
func (r *runState) bound(a *attempt) {
	ad := r.deadline
	if timeout := r.p.attemptTimeout; timeout > 0 {
		if t := r.now.Add(timeout); !r.hasDeadline || t.Before(r.deadline) {
			ad, a.own = t, true
		}
	}
	if !r.callerHas || ad.Before(r.callerDeadline) {
		a.ac = &attemptCtx{parent: r.ctx, deadline: ad}
		a.ctx = a.ac
	}
}

// stop counts the run's end with its stop reason, whether it retried (made
// more than n = 0 attempts' worth of loop), and its duration when timed.
func (r *runState) stop(stop StopReason, n int) {
	var took time.Duration
	if r.timed {
		took = time.Since(r.began)
	}
	r.p.tel.Stop(r.ctx, int(stop), n > 0, took, r.timed)
}

// judge takes the outcome of attempt a, which returned err: it classifies
// it, lets the breaker, the budget, telemetry and the record know, and
// returns the verdict, the stop reason the outcome forces (running if
// none), and the run's error.
func (r *runState) judge(a *attempt, n int, err error) (Verdict, StopReason, error) {
	if r.needEnd || err != nil {
		a.end = time.Now()
		if !r.now.IsZero() {
			a.took = a.end.Sub(r.now)
		}
	}
	verdict, evidence, stop := Verdict{}, true, running
	if err != nil {
		verdict, evidence, stop, err = r.classify(a, err)
	}
	r.count(a, verdict, evidence)
	r.p.tel.Attempt(r.ctx, int(verdict.Kind), verdict.SelfImposed, n+1, a.took, r.timed)
	if verdict.Kind == Throttled {
		r.p.tel.Throttle(r.ctx, n+1, verdict.SelfImposed, verdict.RetryAfter)
	}
	if r.rec != nil {
		*r.rec = append(*r.rec, Attempt{Verdict: verdict, Err: err, Duration: a.took})
	}
	r.now = a.end
	return verdict, stop, err
}

// classify gives a failed attempt its verdict, whether the breaker may
// learn from it, the stop reason it forces (running if none), and its
// error as the run reports it.
func (r *runState) classify(a *attempt, err error) (Verdict, bool, StopReason, error) {
	verdict := r.p.classify(err)
	if e := r.ctx.Err(); e != nil {
		// The caller's cancellation or deadline: stop at once, and teach
		// the breaker nothing.
		if !errors.Is(err, e) {
			err = errors.Join(e, err)
		}
		return verdict, false, callerStop(e), err
	}
	// A self-imposed refusal stays one even when it wraps the deadline that
	// ended its wait in our own queue: the dependency never saw the
	// attempt, so it is no timeout of the dependency's.
	if a.ac == nil || a.end.Before(a.ac.deadline) || !errors.Is(err, context.DeadlineExceeded) {
		return verdict, true, running, err
	}
	switch {
	case verdict.SelfImposed && a.own:
		return verdict, true, running, err
	case verdict.SelfImposed:
		return verdict, true, StopDeadline, err // the policy's Timeout ended the wait: no time is left
	case a.own:
		return Verdict{Kind: Transient}, true, running, &TimeoutError{Timeout: r.p.attemptTimeout, Err: err}
	default: // the policy's overall Timeout ran out during the attempt
		return Verdict{Kind: Transient}, false, StopDeadline, err
	}
}

// count lets the breaker and the budget know of attempt a.
func (r *runState) count(a *attempt, verdict Verdict, evidence bool) {
	stamp := a.end // when the breaker and the budget count the attempt
	if stamp.IsZero() {
		stamp = r.now
	}
	if br := r.p.breaker; br != nil {
		if evidence {
			br.record(stamp, a.probe, verdict.Kind, a.took)
		} else {
			br.release(a.probe)
		}
	}
	if bu := r.p.budget; bu != nil && !r.deposited && !verdict.SelfImposed {
		bu.credit(stamp)
		r.deposited = true
	}
}

// decide returns why the run stops after attempt n with verdict, or
// running.
func (r *runState) decide(n int, verdict Verdict) StopReason {
	switch {
	case verdict.Kind == Success:
		return StopSucceeded
	case verdict.Kind == Permanent:
		return StopPermanent
	case n >= r.p.retries:
		return StopAttemptsExhausted
	}
	return running
}

// wait sleeps before the next attempt: the verdict's hint, else its curve,
// capped by MaximumDelay, and never past the deadline. It returns running,
// or why the run stops instead, with the caller's context error when that
// is why.
func (r *runState) wait(verdict Verdict, n int) (StopReason, error) {
	d := r.delay(verdict)
	if r.hasDeadline && !r.now.Add(d).Before(r.deadline) {
		return StopDeadline, nil
	}
	if bu := r.p.budget; bu != nil && !verdict.SelfImposed && !bu.withdraw(r.now) {
		r.p.tel.BudgetDenied(r.ctx)
		return StopBudgetExhausted, nil
	}
	if r.rec != nil {
		(*r.rec)[len(*r.rec)-1].Delay = d
	}
	r.p.tel.Retry(r.ctx, int(verdict.Kind), verdict.SelfImposed, d, n+1)
	if d > 0 && !sleep(r.ctx, d) {
		e := r.ctx.Err()
		return callerStop(e), e
	}
	r.now = time.Now()
	return running, nil
}

// delay is the wait before the retry of an attempt with verdict.
func (r *runState) delay(verdict Verdict) time.Duration {
	d := max(verdict.RetryAfter, 0)
	if !verdict.hinted() {
		if r.curves == nil {
			r.curves = new([2]curve)
		}
		if verdict.Kind == Throttled {
			d = r.curves[1].next(&r.p.throttled)
		} else {
			d = r.curves[0].next(&r.p.transient)
		}
	}
	if r.p.maximumDelay > 0 {
		d = min(d, r.p.maximumDelay)
	}
	return d
}
