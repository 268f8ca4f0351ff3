package telemetry

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// The resilience runner's instrument names beyond those in names.go
// (AttemptsName, RetriesName, DelayDurationName, BreakerStateName,
// BudgetDenialsName), under the same prefix "headroom.runner.".
const (
	// CallsName counts runs (calls of resilience.Run or Try), unit "{call}",
	// with AttrStop: why the run stopped.
	CallsName = "headroom.runner.calls"
)

// AttrStop is why a run stopped, on CallsName: one of the Stop values.
const AttrStop = "headroom.stop"

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

// RunnerVerdicts are the values of AttrVerdict indexed by the verdict
// numbers the Runner's methods take (resilience.Kind).
var RunnerVerdicts = [...]string{VerdictSuccess, VerdictTransient, VerdictThrottled, VerdictPermanent}

// RunnerStops are the values of AttrStop indexed by the stop numbers
// Runner.Stop takes (resilience.StopReason).
var RunnerStops = [...]string{StopSucceeded, StopAttemptsExhausted, StopPermanent, StopDeadline,
	StopCancelled, StopBreakerOpen, StopBudgetExhausted, StopInvalid}

// delayBuckets are the bucket boundaries of DelayDurationName, in seconds:
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
	// AttrSelfImposed, so [v][0] and [v][1] are the same for the others.
	attemptOpts [len(RunnerVerdicts)][2][]metric.AddOption
	retryOpts   [len(RunnerVerdicts)][2][]metric.AddOption
	delayOpts   [len(RunnerVerdicts)][2][]metric.RecordOption
	stopOpts    [len(RunnerStops)][]metric.AddOption
	base        []metric.AddOption
}

// NewRunner registers the instruments of the policy called name with mp;
// nil mp means the global meter provider (otel.GetMeterProvider). Every
// instrument carries AttrRunner = name and the extra attributes (such as
// AttrHost in httpx).
//
// NewRunner never fails: when an instrument cannot be created, it reports
// the error through otel.Handle and returns nil, which records nothing.
func NewRunner(mp metric.MeterProvider, name string, extra ...attribute.KeyValue) *Runner {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(ScopeName)
	r := &Runner{}
	var err, e error
	r.attempts, e = meter.Int64Counter(AttemptsName, metric.WithUnit("{attempt}"),
		metric.WithDescription("Attempts made by the resilience runner, by verdict."))
	err = errors.Join(err, e)
	r.retries, e = meter.Int64Counter(RetriesName, metric.WithUnit("{retry}"),
		metric.WithDescription("Retries scheduled, by the verdict of the attempt retried."))
	err = errors.Join(err, e)
	r.delay, e = meter.Float64Histogram(DelayDurationName, metric.WithUnit("s"),
		metric.WithDescription("Delays slept between attempts."),
		metric.WithExplicitBucketBoundaries(delayBuckets...))
	err = errors.Join(err, e)
	r.calls, e = meter.Int64Counter(CallsName, metric.WithUnit("{call}"),
		metric.WithDescription("Runs of the resilience runner, by stop reason."))
	err = errors.Join(err, e)
	r.denials, e = meter.Int64Counter(BudgetDenialsName, metric.WithUnit("{retry}"),
		metric.WithDescription("Retries the retry budget refused."))
	err = errors.Join(err, e)
	if err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: runner %q: %w", name, err))
		return nil
	}

	kvs := append([]attribute.KeyValue{attribute.String(AttrRunner, name)}, extra...)
	set := func(more ...attribute.KeyValue) attribute.Set {
		return attribute.NewSet(append(append(make([]attribute.KeyValue, 0, len(kvs)+len(more)), kvs...), more...)...)
	}
	r.base = []metric.AddOption{metric.WithAttributeSet(set())}
	for v, name := range RunnerVerdicts {
		for self := range 2 {
			more := []attribute.KeyValue{attribute.String(AttrVerdict, name)}
			if name == VerdictThrottled {
				more = append(more, attribute.Bool(AttrSelfImposed, self == 1))
			}
			opt := metric.WithAttributeSet(set(more...))
			r.attemptOpts[v][self] = []metric.AddOption{opt}
			r.retryOpts[v][self] = []metric.AddOption{opt}
			r.delayOpts[v][self] = []metric.RecordOption{opt}
		}
	}
	for i, s := range RunnerStops {
		r.stopOpts[i] = []metric.AddOption{metric.WithAttributeSet(set(attribute.String(AttrStop, s)))}
	}
	return r
}

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

// Breaker holds a circuit breaker's state gauge, BreakerStateName, with
// AttrRunner = the breaker's name. A nil *Breaker records nothing.
type Breaker struct {
	state metric.Int64Gauge
	opts  []metric.RecordOption
}

// NewBreaker registers the state gauge of the breaker called name with mp
// (nil: the global meter provider) and records it closed. It never fails:
// on error it reports through otel.Handle and returns nil.
func NewBreaker(mp metric.MeterProvider, name string, extra ...attribute.KeyValue) *Breaker {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	g, err := mp.Meter(ScopeName).Int64Gauge(BreakerStateName, metric.WithUnit("1"),
		metric.WithDescription("A circuit breaker's state: 0 closed, 1 half-open, 2 open."))
	if err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: breaker %q: %w", name, err))
		return nil
	}
	kvs := append([]attribute.KeyValue{attribute.String(AttrRunner, name)}, extra...)
	b := &Breaker{state: g, opts: []metric.RecordOption{metric.WithAttributeSet(attribute.NewSet(kvs...))}}
	b.State(context.Background(), BreakerClosed)
	return b
}

// State records the breaker's state: BreakerClosed, BreakerHalfOpen or
// BreakerOpen.
func (b *Breaker) State(ctx context.Context, s int64) {
	if b != nil {
		b.state.Record(ctx, s, b.opts...)
	}
}
