package metrics

import (
	"github.com/headroom-go/headroom/telemetry"

	"context"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// RunnerVerdicts are the values of telemetry.AttrVerdict indexed by the verdict
// numbers the Runner's methods take (resilience.Kind).
var RunnerVerdicts = [...]string{telemetry.VerdictSuccess, telemetry.VerdictTransient, telemetry.VerdictThrottled, telemetry.VerdictPermanent}

// RunnerStops are the values of telemetry.AttrStop indexed by the stop numbers
// Runner.Stop takes (resilience.StopReason).
var RunnerStops = [...]string{telemetry.StopSucceeded, telemetry.StopAttemptsExhausted, telemetry.StopPermanent, telemetry.StopDeadline,
	telemetry.StopCancelled, telemetry.StopBreakerOpen, telemetry.StopBudgetExhausted, telemetry.StopInvalid}

// delayBuckets are the bucket boundaries of telemetry.DelayDurationName, in seconds:
// from an immediate retry to the longest throttled backoff.
var delayBuckets = []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 30, 60, 120, 300}

// Runner holds one resilience policy's instruments. They are synchronous
// instruments recorded with attribute options computed once in NewRunner,
// so a method call allocates nothing. A nil *Runner records nothing; all
// methods are safe for concurrent use.
type Runner struct {
	attempts, retries, calls, denials metric.Int64Counter
	delay                             metric.Float64Histogram

	// [verdict][self-imposed]; only a throttled verdict carries
	// telemetry.AttrSelfImposed, so [v][0] and [v][1] are the same for the others.
	attemptOpts [len(RunnerVerdicts)][2][]metric.AddOption
	retryOpts   [len(RunnerVerdicts)][2][]metric.AddOption
	delayOpts   [len(RunnerVerdicts)][2][]metric.RecordOption
	stopOpts    [len(RunnerStops)][]metric.AddOption
	base        []metric.AddOption
}

// NewRunner registers the instruments of the policy called name with mp;
// nil mp means the global meter provider (otel.GetMeterProvider). Every
// instrument carries telemetry.AttrRunner = name and the extra attributes (such as
// telemetry.AttrHost in httpx).
//
// NewRunner never fails: when an instrument cannot be created, it reports
// the error through otel.Handle and returns nil, which records nothing.
func NewRunner(mp metric.MeterProvider, name string, extra ...attribute.KeyValue) *Runner {
	in := newInstruments(mp)
	r := &Runner{
		attempts: in.counter(telemetry.AttemptsName, "{attempt}", "Attempts made by the resilience runner, by verdict."),
		retries:  in.counter(telemetry.RetriesName, "{retry}", "Retries scheduled, by the verdict of the attempt retried."),
		delay:    in.histogram(telemetry.DelayDurationName, "Delays slept between attempts.", delayBuckets),
		calls:    in.counter(telemetry.CallsName, "{call}", "Runs of the resilience runner, by stop reason."),
		denials:  in.counter(telemetry.BudgetDenialsName, "{retry}", "Retries the retry budget refused."),
	}
	if in.err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: runner %q: %w", name, in.err))
		return nil
	}

	kvs := append([]attribute.KeyValue{attribute.String(telemetry.AttrRunner, name)}, extra...)
	r.base = []metric.AddOption{metric.WithAttributeSet(attrSet(kvs))}
	for v, verdict := range RunnerVerdicts {
		for self := range 2 {
			more := []attribute.KeyValue{attribute.String(telemetry.AttrVerdict, verdict)}
			if verdict == telemetry.VerdictThrottled {
				more = append(more, attribute.Bool(telemetry.AttrSelfImposed, self == 1))
			}
			opt := metric.WithAttributeSet(attrSet(kvs, more...))
			r.attemptOpts[v][self] = []metric.AddOption{opt}
			r.retryOpts[v][self] = []metric.AddOption{opt}
			r.delayOpts[v][self] = []metric.RecordOption{opt}
		}
	}
	for i, s := range RunnerStops {
		r.stopOpts[i] = []metric.AddOption{metric.WithAttributeSet(attrSet(kvs, attribute.String(telemetry.AttrStop, s)))}
	}
	return r
}

// b2i indexes the self-imposed dimension of the option tables.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Attempt counts one attempt with its verdict (an index of RunnerVerdicts).
func (r *Runner) Attempt(ctx context.Context, verdict int, selfImposed bool) {
	if r == nil || uint(verdict) >= uint(len(RunnerVerdicts)) {
		return
	}
	r.attempts.Add(ctx, 1, r.attemptOpts[verdict][b2i(selfImposed)]...)
}

// Retry counts a retry scheduled after an attempt with the given verdict
// and records the delay before it.
func (r *Runner) Retry(ctx context.Context, verdict int, selfImposed bool, delay time.Duration) {
	if r == nil || uint(verdict) >= uint(len(RunnerVerdicts)) {
		return
	}
	s := b2i(selfImposed)
	r.retries.Add(ctx, 1, r.retryOpts[verdict][s]...)
	r.delay.Record(ctx, delay.Seconds(), r.delayOpts[verdict][s]...)
}

// Stop counts a finished run with its stop reason (an index of
// RunnerStops).
func (r *Runner) Stop(ctx context.Context, reason int) {
	if r == nil || uint(reason) >= uint(len(RunnerStops)) {
		return
	}
	r.calls.Add(ctx, 1, r.stopOpts[reason]...)
}

// BudgetDenied counts a retry the retry budget refused.
func (r *Runner) BudgetDenied(ctx context.Context) {
	if r != nil {
		r.denials.Add(ctx, 1, r.base...)
	}
}

// Breaker holds a circuit breaker's state gauge, telemetry.BreakerStateName, with
// telemetry.AttrRunner = the breaker's name. A nil *Breaker records nothing.
type Breaker struct {
	state     metric.Int64Gauge
	moves     metric.Int64Counter
	opts      []metric.RecordOption
	enterOpts [len(breakerStates)][]metric.AddOption // by state entered
}

// NewBreaker registers the state gauge and transitions counter of the
// breaker called name with mp (nil: the global meter provider) and records
// it closed. It never fails: on error it reports through otel.Handle and
// returns nil.
func NewBreaker(mp metric.MeterProvider, name string, extra ...attribute.KeyValue) *Breaker {
	in := newInstruments(mp)
	g := in.gauge(telemetry.BreakerStateName, "{state}", "A circuit breaker's state: 0 closed, 1 half-open, 2 open.")
	c := in.counter(telemetry.BreakerTransitionsName, "{transition}", "A circuit breaker's changes of state, by the state entered.")
	if in.err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: breaker %q: %w", name, in.err))
		return nil
	}
	kvs := append([]attribute.KeyValue{attribute.String(telemetry.AttrRunner, name)}, extra...)
	b := &Breaker{state: g, moves: c, opts: []metric.RecordOption{metric.WithAttributeSet(attrSet(kvs))}}
	for s, v := range breakerStates {
		b.enterOpts[s] = []metric.AddOption{metric.WithAttributeSet(attrSet(kvs, attribute.String(telemetry.AttrBreakerState, v)))}
	}
	b.State(context.Background(), telemetry.BreakerClosed)
	return b
}

// breakerStates are the values of AttrBreakerState by state number.
var breakerStates = [...]string{telemetry.BreakerStateClosed, telemetry.BreakerStateHalfOpen, telemetry.BreakerStateOpen}

// State records the breaker's state: telemetry.BreakerClosed,
// BreakerHalfOpen or BreakerOpen.
func (b *Breaker) State(ctx context.Context, s int64) {
	if b != nil {
		b.state.Record(ctx, s, b.opts...)
	}
}

// Entered counts a transition into state s, so that a state held for less
// than a scrape interval still shows.
func (b *Breaker) Entered(ctx context.Context, s int64) {
	if b != nil && uint64(s) < uint64(len(breakerStates)) {
		b.moves.Add(ctx, 1, b.enterOpts[s]...)
	}
}
