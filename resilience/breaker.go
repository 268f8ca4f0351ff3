package resilience

import (
	"context"
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
)

// Polly's health window: 10 sub-windows, or a single window when the
// sampling duration is under 200 ms.
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
// Its core, allow and record, takes the current time as an argument, so the
// rules can be tested on any clock; the runner passes time.Now().
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
	o = o.withDefaults()
	b := &Breaker{opts: o, tel: metrics.NewBreaker(o.MeterProvider, o.Name)}
	b.tel.Log(o.Logger, o.Name)
	if o.ratioMode() {
		b.nsub, b.sub = breakerSubWindows, o.SamplingDuration/breakerSubWindows
		if o.SamplingDuration < breakerSingleWindowLT {
			b.nsub, b.sub = 1, o.SamplingDuration
		}
	}
	return b, nil
}

// State is the breaker's state as last changed. An open breaker whose
// BreakDuration has passed reads Open until a call asks to pass.
func (b *Breaker) State() State { return State(b.state.Load()) }

// needsTime reports whether record reads its time argument.
func (b *Breaker) needsTime() bool { return b.nsub > 0 }

// allow asks to make a call at now. It returns a *BreakerOpenError when the
// breaker refuses. probe reports that the call is the half-open probe; pass
// it back to record (or release), which every allowed call must reach. A zero now means
// time.Now(), read only if the breaker is not closed.
func (b *Breaker) allow(now time.Time) (probe bool, err error) {
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

// changedToProbe reports the change to half-open of the probe allow has
// just taken. If the report does not return (OnStateChange panicked), it
// gives the probe slot back before the panic goes on: allow returns no
// probe, so no record or release would, and the breaker would refuse every
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

// record reports the outcome of a call allow let through: its verdict kind
// and how long it took. probe is what allow returned.
func (b *Breaker) record(now time.Time, probe bool, k Kind, took time.Duration) {
	if k == Throttled && !probe {
		return // no evidence, nothing to free
	}
	failure := k == Transient || (b.opts.SlowCallThreshold > 0 && took >= b.opts.SlowCallThreshold)
	b.mu.Lock()
	from, to := b.recordLocked(now, probe, k, failure)
	b.mu.Unlock()
	b.changed(from, to)
}

// recordLocked does record's work under b.mu and returns the change of
// state, if any (from == to when none).
func (b *Breaker) recordLocked(now time.Time, probe bool, k Kind, failure bool) (from, to State) {
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
