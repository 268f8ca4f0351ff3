package metrics

import (
	"github.com/headroom-go/headroom/telemetry"

	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"
	"weak"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// RunnerVerdicts are the values of telemetry.AttrVerdict indexed by the verdict
// numbers the Runner's methods take (resilience.Kind).
var RunnerVerdicts = [...]string{VerdictSuccess, VerdictTransient, VerdictThrottled, VerdictPermanent}

// RunnerStops are the values of telemetry.AttrStop indexed by the stop numbers
// Runner.Stop takes (resilience.StopReason).
var RunnerStops = [...]string{StopSucceeded, StopAttemptsExhausted, StopPermanent, StopDeadline,
	StopCancelled, StopBreakerOpen, StopBudgetExhausted, StopInvalid}

// delayBuckets are the bucket boundaries of telemetry.DelayDurationName, in
// seconds: from an immediate retry to the longest throttled backoff.
var delayBuckets = []float64{0, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 30, 60, 120, 300}

// durationBuckets are the bucket boundaries of the call and attempt
// durations, in seconds: the semantic conventions' HTTP buckets, extended
// to the longest run a default policy allows.
var durationBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 30, 60, 120}

// maxAttemptLabel is the highest value of telemetry.AttrAttempt: later
// attempts carry it too, so that a policy with many retries cannot grow the
// series without bound.
const maxAttemptLabel = 8

// Runner holds one resilience policy's instruments. They are synchronous
// instruments recorded with attribute options computed once in NewRunner,
// so a method call allocates nothing. A nil *Runner records nothing; all
// methods are safe for concurrent use.
type Runner struct {
	attempts, retries, calls, denials metric.Int64Counter
	delay, callDur, attemptDur        metric.Float64Histogram

	// [verdict][self-imposed]; only a throttled verdict carries
	// AttrSelfImposed, so [v][0] and [v][1] are the same for the others.
	attemptOpts [len(RunnerVerdicts)][2][]metric.AddOption
	retryOpts   [len(RunnerVerdicts)][2][]metric.AddOption
	delayOpts   [len(RunnerVerdicts)][2][]metric.RecordOption
	// [verdict][self-imposed][attempt number - 1]
	attemptDurOpts [len(RunnerVerdicts)][2][maxAttemptLabel][]metric.RecordOption
	// [stop][retried]
	stopOpts    [len(RunnerStops)][2][]metric.AddOption
	stopDurOpts [len(RunnerStops)][2][]metric.RecordOption
	base        []metric.AddOption
	events      *Events
}

// NewRunner registers the instruments of the policy called name with mp;
// nil mp means the global meter provider (otel.GetMeterProvider). Every
// instrument carries AttrRunner = name and the extra attributes (such as
// AttrServerAddress in httpx).
//
// NewRunner never fails: when an instrument cannot be created, it reports
// the error through otel.Handle and returns nil, which records nothing.
func NewRunner(mp metric.MeterProvider, name string, extra ...attribute.KeyValue) *Runner {
	in := newInstruments(mp)
	r := &Runner{
		attempts:   in.counter(telemetry.AttemptsName, "{attempt}", "Attempts made by the resilience runner, by verdict."),
		retries:    in.counter(telemetry.RetriesName, "{retry}", "Retries scheduled, by the verdict of the attempt retried."),
		delay:      in.histogram(telemetry.DelayDurationName, "Delays slept between attempts.", delayBuckets),
		calls:      in.counter(telemetry.CallsName, "{call}", "Runs of the resilience runner, by stop reason and whether they retried."),
		denials:    in.counter(telemetry.BudgetDenialsName, "{retry}", "Retries the retry budget refused."),
		callDur:    in.histogram(telemetry.CallDurationName, "Runs of the resilience runner, from start to result.", durationBuckets),
		attemptDur: in.histogram(telemetry.AttemptDurationName, "Attempts of the resilience runner, by verdict and number.", durationBuckets),
	}
	if in.err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: runner %q: %w", name, in.err))
		return nil
	}
	kvs := append([]attribute.KeyValue{attribute.String(telemetry.AttrRunner, name)}, extra...)
	r.base = []metric.AddOption{metric.WithAttributeSet(attrSet(kvs))}
	r.verdictOptions(kvs)
	for i, s := range RunnerStops {
		for retried := range 2 {
			opt := metric.WithAttributeSet(attrSet(kvs, attribute.String(telemetry.AttrStop, s), attribute.Bool(telemetry.AttrRetried, retried == 1)))
			r.stopOpts[i][retried] = []metric.AddOption{opt}
			r.stopDurOpts[i][retried] = []metric.RecordOption{opt}
		}
	}
	return r
}

// verdictOptions fills the option tables indexed by verdict.
func (r *Runner) verdictOptions(kvs []attribute.KeyValue) {
	for v, verdict := range RunnerVerdicts {
		for self := range 2 {
			more := []attribute.KeyValue{attribute.String(telemetry.AttrVerdict, verdict)}
			if verdict == VerdictThrottled {
				more = append(more, attribute.Bool(telemetry.AttrSelfImposed, self == 1))
			}
			opt := metric.WithAttributeSet(attrSet(kvs, more...))
			r.attemptOpts[v][self] = []metric.AddOption{opt}
			r.retryOpts[v][self] = []metric.AddOption{opt}
			r.delayOpts[v][self] = []metric.RecordOption{opt}
			for n := range maxAttemptLabel {
				r.attemptDurOpts[v][self][n] = []metric.RecordOption{metric.WithAttributeSet(
					attrSet(kvs, append(more, attribute.Int(telemetry.AttrAttempt, n+1))...))}
			}
		}
	}
}

// b2i indexes the boolean dimensions of the option tables.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// Timed reports whether the durations are recorded: the runner reads the
// clock for them only then.
func (r *Runner) Timed(ctx context.Context) bool {
	return r != nil && (r.callDur.Enabled(ctx) || r.attemptDur.Enabled(ctx))
}

// Attempt counts one attempt with its verdict (an index of RunnerVerdicts)
// and, when timed, records its duration with its number (from 1).
func (r *Runner) Attempt(ctx context.Context, verdict int, selfImposed bool, number int, took time.Duration, timed bool) {
	if r == nil || uint(verdict) >= uint(len(RunnerVerdicts)) {
		return
	}
	s := b2i(selfImposed)
	r.attempts.Add(ctx, 1, r.attemptOpts[verdict][s]...)
	if timed {
		n := min(max(number, 1), maxAttemptLabel) - 1
		r.attemptDur.Record(ctx, max(took, 0).Seconds(), r.attemptDurOpts[verdict][s][n]...)
	}
}

// Log sends the runner's notable events to l: a retry the budget refused
// (Warn, summarised). nil l logs nothing. Set it once, right after
// NewRunner.
func (r *Runner) Log(l *slog.Logger, name string) {
	if r != nil {
		r.events = NewEvents(l, slog.String(telemetry.AttrRunner, name))
	}
}

// Throttle adds the throttled attempt number (from 1) to the caller's
// span, with whether it was self-imposed and the Retry-After it carried.
func (r *Runner) Throttle(ctx context.Context, number int, selfImposed bool, retryAfter time.Duration) {
	if r == nil {
		return
	}
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		attrs := []attribute.KeyValue{attribute.Int(telemetry.AttrAttempt, number), attribute.Bool(telemetry.AttrSelfImposed, selfImposed)}
		if retryAfter > 0 {
			attrs = append(attrs, attribute.Float64(telemetry.AttrRetryAfter, retryAfter.Seconds()))
		}
		span.AddEvent(telemetry.EventThrottled, trace.WithAttributes(attrs...))
	}
}

// Retry counts a retry scheduled after attempt number (from 1) with the
// given verdict, records the delay before it, and adds the retry to the
// caller's span.
func (r *Runner) Retry(ctx context.Context, verdict int, selfImposed bool, delay time.Duration, number int) {
	if r == nil || uint(verdict) >= uint(len(RunnerVerdicts)) {
		return
	}
	SpanEvent(ctx, telemetry.EventRetry, attribute.Int(telemetry.AttrAttempt, number),
		attribute.String(telemetry.AttrVerdict, RunnerVerdicts[verdict]), attribute.Float64(telemetry.AttrRetryDelay, delay.Seconds()))
	s := b2i(selfImposed)
	r.retries.Add(ctx, 1, r.retryOpts[verdict][s]...)
	r.delay.Record(ctx, delay.Seconds(), r.delayOpts[verdict][s]...)
}

// Stop counts a finished run with its stop reason (an index of
// RunnerStops) and whether it retried, and, when timed, records its
// duration.
func (r *Runner) Stop(ctx context.Context, reason int, retried bool, took time.Duration, timed bool) {
	if r == nil || uint(reason) >= uint(len(RunnerStops)) {
		return
	}
	t := b2i(retried)
	r.calls.Add(ctx, 1, r.stopOpts[reason][t]...)
	if timed {
		r.callDur.Record(ctx, max(took, 0).Seconds(), r.stopDurOpts[reason][t]...)
	}
}

// BudgetDenied counts a retry the retry budget refused.
func (r *Runner) BudgetDenied(ctx context.Context) {
	if r != nil {
		r.denials.Add(ctx, 1, r.base...)
		r.events.Log(ctx, slog.LevelWarn, "retry budget exhausted: a retry was refused", "")
	}
}

// Breaker holds a circuit breaker's state gauge, telemetry.BreakerStateName, with
// telemetry.AttrRunner = the breaker's name. A nil *Breaker records nothing.
type Breaker struct {
	name      string
	last      atomic.Int64 // the state last recorded, for a status page
	events    *Events
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
	b := &Breaker{name: name, state: g, moves: c, opts: []metric.RecordOption{metric.WithAttributeSet(attrSet(kvs))}}
	for s, v := range breakerStates {
		b.enterOpts[s] = []metric.AddOption{metric.WithAttributeSet(attrSet(kvs, attribute.String(telemetry.AttrBreakerState, v)))}
	}
	b.State(context.Background(), BreakerClosed)
	registry.Lock()
	registry.breakers = append(registry.breakers, weak.Make(b))
	registry.Unlock()
	return b
}

// Log sends the breaker's transitions to l: opening at Warn, half-opening
// and closing at Info. nil l logs nothing. Set it once, right after
// NewBreaker.
func (b *Breaker) Log(l *slog.Logger, name string) {
	if b != nil {
		b.events = NewEvents(l, slog.String(telemetry.AttrRunner, name))
	}
}

// breakerStates are the values of AttrBreakerState by state number.
var breakerStates = [...]string{BreakerStateClosed, BreakerStateHalfOpen, BreakerStateOpen}

// State records the breaker's state: BreakerClosed,
// BreakerHalfOpen or BreakerOpen.
func (b *Breaker) State(ctx context.Context, s int64) {
	if b != nil {
		b.last.Store(min(max(s, 0), int64(len(breakerStates)-1)))
		b.state.Record(ctx, s, b.opts...)
	}
}

// Entered counts a transition into state s, so that a state held for less
// than a scrape interval still shows.
func (b *Breaker) Entered(ctx context.Context, s int64) {
	if b != nil && uint64(s) < uint64(len(breakerStates)) {
		b.moves.Add(ctx, 1, b.enterOpts[s]...)
		level := slog.LevelInfo
		if s == BreakerOpen {
			level = slog.LevelWarn
		}
		b.events.Log(ctx, level, "circuit breaker "+breakerStates[s], "", slog.String(telemetry.AttrBreakerState, breakerStates[s]))
	}
}
