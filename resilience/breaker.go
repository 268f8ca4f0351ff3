package resilience

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metrics"
)

// Circuit breaker defaults: Polly v8's CircuitBreakerStrategyOptions, which
// Microsoft.Extensions.Http.Resilience's standard pipeline keeps
// (research/algorithms.md §5.1, §5.2).
const (
	DefaultFailureRatio      = 0.1              // break at 10 % failures...
	DefaultMinimumThroughput = 100              // ...among at least 100 calls...
	DefaultSamplingDuration  = 30 * time.Second // ...in the last 30 s...
	DefaultBreakDuration     = 5 * time.Second  // ...and stay open 5 s.
)

// Polly's health window: 10 sub-windows, or a single window when the
// sampling duration is under 200 ms (research/algorithms.md §5.2).
const (
	breakerSubWindows     = 10
	breakerSingleWindowLT = 200 * time.Millisecond
)

// State is a circuit breaker's state. The values match telemetry's
// BreakerClosed, BreakerHalfOpen and BreakerOpen.
type State uint8

const (
	// Closed: calls pass and their outcomes are counted.
	Closed State = iota
	// HalfOpen: the break is over; one probe call may pass, and its outcome
	// closes the breaker or opens it again.
	HalfOpen
	// Open: calls fail fast with a *BreakerOpenError until BreakDuration has
	// passed.
	Open
)

var stateNames = [...]string{"closed", "half_open", "open"}

func (s State) String() string {
	if int(s) < len(stateNames) {
		return stateNames[s]
	}
	return "state(" + strconv.Itoa(int(s)) + ")"
}

// ErrBreakerOpen is what every *BreakerOpenError matches.
var ErrBreakerOpen = errors.New("circuit breaker open")

// BreakerOpenError is the fail-fast refusal of an open (or half-open, probe
// in flight) breaker: no call was made. RetryAfter is how long until the
// breaker lets a probe through; 0 when it is half-open and waits for the
// probe in flight. errors.Is(err, ErrBreakerOpen) holds.
type BreakerOpenError struct {
	Breaker    string
	RetryAfter time.Duration
}

func (e *BreakerOpenError) Error() string {
	s := "resilience: circuit breaker"
	if e.Breaker != "" {
		s += " " + strconv.Quote(e.Breaker)
	}
	s += " is open"
	if e.RetryAfter > 0 {
		s += "; it tries again in " + e.RetryAfter.String()
	} else {
		s += "; a probe is in flight"
	}
	return s
}

// Is makes errors.Is(err, ErrBreakerOpen) hold.
func (e *BreakerOpenError) Is(target error) bool { return target == ErrBreakerOpen }

// BreakerOptions configure a Breaker. Choose exactly one mode:
// ConsecutiveFailures above 0 breaks after that many Transient failures in a
// row; FailureRatio above 0 breaks when, among at least MinimumThroughput
// calls in the last SamplingDuration, that fraction failed (Polly's
// "advanced" breaker). Asking for both, or neither, is an error.
type BreakerOptions struct {
	// Name names the breaker in errors and telemetry.
	Name string

	// ConsecutiveFailures selects the consecutive mode: the breaker opens
	// after this many failures in a row. A success resets the count.
	ConsecutiveFailures int

	// FailureRatio selects the ratio mode, in (0, 1]: the breaker opens when
	// the failures among the calls in the sampling window reach this
	// fraction. Polly's default is DefaultFailureRatio.
	FailureRatio float64
	// MinimumThroughput is how many calls the window must hold before the
	// ratio counts; at least 2 (Polly's minimum). Ratio mode only.
	MinimumThroughput int
	// SamplingDuration is the window, which slides in 10 sub-windows (one
	// window under 200 ms, as Polly does). Ratio mode only. A policy also
	// requires it to be at least twice its AttemptTimeout.
	SamplingDuration time.Duration

	// BreakDuration is how long the breaker stays open before it lets one
	// probe through. Above 0.
	BreakDuration time.Duration

	// SlowCallThreshold, when above 0, counts a call that took at least this
	// long as a failure even if it succeeded. 0 turns it off.
	SlowCallThreshold time.Duration

	// OnStateChange, if set, is called after every change of state, outside
	// the breaker's lock, on the goroutine that caused it. Calls from
	// different goroutines may interleave. A panic in it propagates to the
	// caller of Allow or Record (the runner's caller); the change of state
	// stands, but a probe that Allow took is given back, as Allow returns
	// no probe to Record.
	OnStateChange func(from, to State)

	// MeterProvider receives the breaker's state gauge; nil means the global
	// meter provider. The gauge reads the breaker's state once the calls
	// that changed it have returned.
	MeterProvider metric.MeterProvider
}

// Validate lists every problem with o at once (errors.Join of
// *headroom.ConfigError), or returns nil.
func (o BreakerOptions) Validate() error {
	var errs []error
	bad := func(field string, v any, want string) {
		errs = append(errs, &headroom.ConfigError{Package: "resilience", Field: "Breaker." + field, Value: v, Want: want})
	}
	consecutive, ratio := o.ConsecutiveFailures != 0, o.FailureRatio != 0
	switch {
	case consecutive && ratio:
		bad("ConsecutiveFailures", o.ConsecutiveFailures, "0 when FailureRatio is set: choose one mode")
	case !consecutive && !ratio:
		bad("FailureRatio", o.FailureRatio, "a mode: FailureRatio in (0, 1] or ConsecutiveFailures of 1 or more")
	}
	if o.ConsecutiveFailures < 0 {
		bad("ConsecutiveFailures", o.ConsecutiveFailures, "1 or more, or 0 in ratio mode")
	}
	if ratio && !(o.FailureRatio > 0 && o.FailureRatio <= 1) {
		bad("FailureRatio", o.FailureRatio, "a fraction in (0, 1]")
	}
	if ratio || o.MinimumThroughput != 0 {
		if o.MinimumThroughput < 2 {
			bad("MinimumThroughput", o.MinimumThroughput, "2 or more (ratio mode only)")
		} else if !ratio {
			bad("MinimumThroughput", o.MinimumThroughput, "0 outside ratio mode")
		}
	}
	if ratio || o.SamplingDuration != 0 {
		if o.SamplingDuration <= 0 {
			bad("SamplingDuration", o.SamplingDuration, "a duration above 0 (ratio mode only)")
		} else if !ratio {
			bad("SamplingDuration", o.SamplingDuration, "0 outside ratio mode")
		}
	}
	if o.BreakDuration <= 0 {
		bad("BreakDuration", o.BreakDuration, "a duration above 0")
	}
	if o.SlowCallThreshold < 0 {
		bad("SlowCallThreshold", o.SlowCallThreshold, "0 (off) or a duration above 0")
	}
	return join(errs)
}

// healthBucket counts one sub-window's outcomes.
type healthBucket struct {
	n             int64 // the sub-window's number; buckets of older numbers are stale
	success, fail int64
}

// A Breaker is a circuit breaker for one dependency: share it between the
// policies that call that dependency. It is safe for concurrent use.
//
// Only Transient verdicts are evidence of failure, plus slow calls when
// SlowCallThreshold is set; Success and Permanent verdicts (the dependency
// answered) are evidence of health; Throttled verdicts, self-imposed or not,
// record nothing. While open it refuses calls with a *BreakerOpenError;
// after BreakDuration it lets one probe through (HalfOpen), which closes it
// on success and opens it again on failure.
//
// Its core, Allow and Record, takes the current time, so a simulator can
// drive it on virtual time; the runner passes time.Now().
type Breaker struct {
	opts  BreakerOptions
	sub   time.Duration // sub-window length (ratio mode)
	nsub  int64         // sub-windows in the window
	tel   *metrics.Breaker
	state atomic.Uint32 // State; written under mu, read without it

	mu          sync.Mutex
	consecutive int
	started     bool
	epoch       time.Time
	cur         int64
	buckets     [breakerSubWindows]healthBucket
	openUntil   time.Time
	probing     bool
}

// NewBreaker returns a closed breaker with options o, or the validation
// error.
func NewBreaker(o BreakerOptions) (*Breaker, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	b := &Breaker{opts: o, tel: metrics.NewBreaker(o.MeterProvider, o.Name)}
	if o.FailureRatio > 0 {
		b.nsub, b.sub = breakerSubWindows, o.SamplingDuration/breakerSubWindows
		if o.SamplingDuration < breakerSingleWindowLT {
			b.nsub, b.sub = 1, o.SamplingDuration
		}
	}
	return b, nil
}

// Options returns the options the breaker was built with.
func (b *Breaker) Options() BreakerOptions { return b.opts }

// Name is the breaker's name.
func (b *Breaker) Name() string { return b.opts.Name }

// State is the breaker's state as last changed. An open breaker whose
// BreakDuration has passed reads Open until a call asks to pass.
func (b *Breaker) State() State { return State(b.state.Load()) }

// needsTime reports whether Record reads its time argument.
func (b *Breaker) needsTime() bool { return b.nsub > 0 }

// Allow asks to make a call at now. It returns a *BreakerOpenError when the
// breaker refuses. probe reports that the call is the half-open probe; pass
// it back to Record, which every allowed call must reach. A zero now means
// time.Now(), read only if the breaker is not closed.
func (b *Breaker) Allow(now time.Time) (probe bool, err error) {
	if State(b.state.Load()) == Closed {
		return false, nil
	}
	if now.IsZero() {
		now = time.Now()
	}
	b.mu.Lock()
	var from State
	switch State(b.state.Load()) {
	case Closed:
		b.mu.Unlock()
		return false, nil
	case Open:
		if now.Before(b.openUntil) {
			wait := b.openUntil.Sub(now)
			b.mu.Unlock()
			return false, &BreakerOpenError{Breaker: b.opts.Name, RetryAfter: wait}
		}
		from = b.setState(HalfOpen)
		b.probing = true
	case HalfOpen:
		if b.probing {
			b.mu.Unlock()
			return false, &BreakerOpenError{Breaker: b.opts.Name}
		}
		from = HalfOpen
		b.probing = true
	}
	b.mu.Unlock()
	b.changedToProbe(from)
	return true, nil
}

// changedToProbe reports the change to half-open of the probe Allow has
// just taken. If the report does not return (OnStateChange panicked), it
// gives the probe slot back before the panic goes on: Allow returns no
// probe, so no Record or release would, and the breaker would refuse every
// call for ever.
func (b *Breaker) changedToProbe(from State) {
	reported := false
	defer func() {
		if !reported {
			b.release(true)
		}
	}()
	b.changed(from, HalfOpen)
	reported = true
}

// Record reports the outcome of a call Allow let through: its verdict kind
// and how long it took. probe is what Allow returned.
func (b *Breaker) Record(now time.Time, probe bool, k Kind, took time.Duration) {
	if k == Throttled && !probe {
		return // no evidence, nothing to free
	}
	failure := k == Transient || (b.opts.SlowCallThreshold > 0 && took >= b.opts.SlowCallThreshold)
	b.mu.Lock()
	from, to := b.record(now, probe, k, failure)
	b.mu.Unlock()
	b.changed(from, to)
}

// record does Record's work under b.mu and returns the change of state, if
// any (from == to when none).
func (b *Breaker) record(now time.Time, probe bool, k Kind, failure bool) (from, to State) {
	s := State(b.state.Load())
	if probe {
		b.probing = false
	}
	if k == Throttled {
		return s, s // a throttled probe frees the slot and proves nothing
	}
	switch s {
	case Closed:
		if b.opts.ConsecutiveFailures > 0 {
			if !failure {
				b.consecutive = 0
				return s, s
			}
			b.consecutive++
			if b.consecutive < b.opts.ConsecutiveFailures {
				return s, s
			}
			return b.open(now), Open
		}
		bk := b.bucket(now)
		if !failure {
			bk.success++
			return s, s
		}
		bk.fail++
		var ok, fail int64
		for i := range b.buckets {
			if c := &b.buckets[i]; c.n > b.cur-b.nsub {
				ok, fail = ok+c.success, fail+c.fail
			}
		}
		if total := ok + fail; total >= int64(b.opts.MinimumThroughput) &&
			float64(fail) >= b.opts.FailureRatio*float64(total) {
			return b.open(now), Open
		}
		return s, s
	case HalfOpen:
		if !probe {
			return s, s // a call from before the break: stale evidence
		}
		if failure {
			return b.open(now), Open
		}
		b.reset()
		return b.setState(Closed), Closed
	default: // Open: only calls from before the break can record; stale
		return s, s
	}
}

// bucket returns the sub-window of now, sliding the window. b.mu is held.
func (b *Breaker) bucket(now time.Time) *healthBucket {
	if !b.started {
		b.started, b.epoch, b.cur = true, now, 0
	}
	if n := int64(now.Sub(b.epoch) / b.sub); n > b.cur {
		b.cur = n
	}
	bk := &b.buckets[b.cur%breakerSubWindows]
	if bk.n != b.cur {
		*bk = healthBucket{n: b.cur}
	}
	return bk
}

// open opens the breaker at now and returns the state it left. b.mu is held.
func (b *Breaker) open(now time.Time) State {
	b.openUntil = now.Add(b.opts.BreakDuration)
	b.reset()
	return b.setState(Open)
}

// reset forgets the evidence. b.mu is held.
func (b *Breaker) reset() {
	b.consecutive = 0
	b.started = false
	b.buckets = [breakerSubWindows]healthBucket{}
}

// setState changes the state and returns the old one. b.mu is held.
func (b *Breaker) setState(s State) State {
	return State(b.state.Swap(uint32(s)))
}

// changed reports a change of state, outside b.mu.
func (b *Breaker) changed(from, to State) {
	if from == to {
		return
	}
	b.tel.Entered(context.Background(), int64(to))
	b.recordState()
	if f := b.opts.OnStateChange; f != nil {
		f(from, to)
	}
}

// recordState sets the state gauge to the breaker's state once changes
// stop. Changes on other goroutines can overtake this one between its
// unlock and the gauge, so it records the state it reads rather than its
// own "to", and reads again after recording: if the state moved meanwhile,
// its record may have landed after the mover's, so it records again. The
// record that lands last was thus followed by a read that found it current,
// and a change after that read records after it. It takes no lock, so a
// change never waits for another goroutine's gauge record.
func (b *Breaker) recordState() {
	s := b.state.Load()
	for {
		b.tel.State(context.Background(), int64(s))
		now := b.state.Load()
		if now == s {
			return
		}
		s = now
	}
}

// release frees the probe slot of a call that taught nothing: a panic, or
// the caller's cancellation.
func (b *Breaker) release(probe bool) {
	if probe {
		b.mu.Lock()
		b.probing = false
		b.mu.Unlock()
	}
}
