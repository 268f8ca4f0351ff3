package limit

import (
	"context"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// AdaptiveRateOptions configures the throttle-driven adaptive rate limiter
// (seeds 000 and 001): a token bucket in units whose rate is learned from
// the throttles the dependency answers, with AIMD (the default) or CUBIC.
//
// Rates are units per minute for the whole budget; with Instances above 1
// each process takes its share. A zero field means its default, so
// "adaptiveRate": {} is a complete configuration. The defaults derive from
// SharePoint Online's published per-app limits of 1,250 to 6,250 resource
// units a minute by tenant size: at most 5,625 (90% of the largest tier),
// starting at 1,125 (90% of the smallest), never below 60 (one unit a
// second). For another API, set MaxUnitsPerMinute just below its limit.
type AdaptiveRateOptions struct {
	// Controller is "aimd" (the default) or "cubic".
	Controller string `json:"controller,omitempty"`
	// MinUnitsPerMinute is the floor of the rate; default 60, or
	// MaxUnitsPerMinute if lower.
	MinUnitsPerMinute float64 `json:"minUnitsPerMinute,omitempty"`
	// MaxUnitsPerMinute is the ceiling of the rate; default 5,625 (or the
	// minimum or initial rate if higher).
	MaxUnitsPerMinute float64 `json:"maxUnitsPerMinute,omitempty"`
	// InitialUnitsPerMinute is the starting rate; default 1,125, kept
	// between the minimum and the maximum.
	InitialUnitsPerMinute float64 `json:"initialUnitsPerMinute,omitempty"`
	// Burst is how much of the rate the bucket holds; default "10s". The
	// bucket holds at least 1 unit, and a request larger than the bucket
	// goes when it is full and drives it below zero.
	Burst Duration `json:"burst,omitempty"`
	// QueueLimit is how many requests may wait in FIFO order; default 500.
	// -1 refuses at once instead of queueing. (Options.QueueLimit does not
	// apply to this shape.)
	QueueLimit int `json:"queueLimit,omitempty"`
	// MaxWait is the longest a request may wait; default "100s".
	MaxWait Duration `json:"maxWait,omitempty"`
	// DecreaseCooldown is the least time between two cuts; default "5s";
	// negative for none.
	DecreaseCooldown Duration `json:"decreaseCooldown,omitempty"`
	// MaxPause caps the pause after a throttle with a Retry-After; default
	// "30s"; negative never pauses.
	MaxPause Duration `json:"maxPause,omitempty"`
	// Instances is how many processes share the budget; default 1. See
	// also InstanceCounter and AdaptiveRateLimiter.SetInstances.
	Instances int `json:"instances,omitempty"`
	// Disabled measures only: the limiter admits every request and never
	// changes its rate, but still records units and throttles.
	Disabled bool `json:"disabled,omitempty"`
	// AIMD tunes the "aimd" controller.
	AIMD *AIMDOptions `json:"aimd,omitempty"`
	// Cubic tunes the "cubic" controller.
	Cubic *CubicOptions `json:"cubic,omitempty"`
	// PublishedLimitFraction is the share of a published quota the whole
	// budget may use once AdaptiveRateLimiter.SetPublishedLimit gives one:
	// the maximum becomes min(MaxUnitsPerMinute, fraction × published); in
	// (0, 1], default 0.98 (1 − the quota guard's default reserve of 2%).
	PublishedLimitFraction float64 `json:"publishedLimitFraction,omitempty"`

	// RateController replaces Controller with your own.
	RateController adaptive.RateController `json:"-"`
	// InstanceCounter, when set, is polled at most once a second for the
	// instance count, and wins over Instances after the first poll.
	InstanceCounter adaptive.InstanceCounter `json:"-"`
}

// AIMDOptions tunes AIMD; a zero field means its default.
type AIMDOptions struct {
	// DecreaseFactor multiplies the rate on a cut; default 0.7.
	DecreaseFactor float64 `json:"decreaseFactor,omitempty"`
	// IncreaseStep is added, for the whole budget, after each
	// IncreaseInterval in which requests waited; default 120 units a
	// minute.
	IncreaseStep float64 `json:"increaseStep,omitempty"`
	// IncreaseInterval is the least time between two steps; default "10s".
	IncreaseInterval Duration `json:"increaseInterval,omitempty"`
}

// CubicOptions tunes CUBIC; a zero field means its default (the AWS SDK's).
type CubicOptions struct {
	// Beta is the fraction of the rate kept on a cut; default 0.7.
	Beta float64 `json:"beta,omitempty"`
	// ScaleConstant is C for the whole budget, in units per second per
	// second³; default 0.4.
	ScaleConstant float64 `json:"scaleConstant,omitempty"`
}

// config turns the options into the engine's configuration, defaults
// applied.
func (a *AdaptiveRateOptions) config() adaptive.RateConfig {
	c := adaptive.DefaultRateConfig()
	c.MaxUnitsPerMinute = a.MaxUnitsPerMinute
	if c.MaxUnitsPerMinute == 0 {
		c.MaxUnitsPerMinute = max(adaptive.DefaultMaxUnitsPerMinute, a.MinUnitsPerMinute, a.InitialUnitsPerMinute)
	}
	c.MinUnitsPerMinute = a.MinUnitsPerMinute
	if c.MinUnitsPerMinute == 0 {
		c.MinUnitsPerMinute = min(adaptive.DefaultMinUnitsPerMinute, c.MaxUnitsPerMinute)
	}
	c.InitialUnitsPerMinute = a.InitialUnitsPerMinute
	if c.InitialUnitsPerMinute == 0 {
		c.InitialUnitsPerMinute = min(max(adaptive.DefaultInitialUnitsPerMinute, c.MinUnitsPerMinute), c.MaxUnitsPerMinute)
	}
	if a.Burst != 0 {
		c.Burst = time.Duration(a.Burst)
	}
	switch {
	case a.QueueLimit == -1:
		c.QueueLimit = 0
	case a.QueueLimit != 0:
		c.QueueLimit = a.QueueLimit
	}
	if a.MaxWait != 0 {
		c.MaxWait = time.Duration(a.MaxWait)
	}
	if a.DecreaseCooldown != 0 {
		c.DecreaseCooldown = max(time.Duration(a.DecreaseCooldown), 0)
	}
	if a.MaxPause != 0 {
		c.MaxPause = max(time.Duration(a.MaxPause), 0)
	}
	c.Instances = max(a.Instances, 1)
	if a.Instances < 0 {
		c.Instances = a.Instances // reported by Problems
	}
	c.Disabled = a.Disabled
	if a.PublishedLimitFraction != 0 {
		c.PublishedLimitFraction = a.PublishedLimitFraction
	}
	switch {
	case a.RateController != nil:
		c.Controller = a.RateController
	case strings.EqualFold(a.Controller, "cubic"):
		var k adaptive.Cubic
		if a.Cubic != nil {
			k = adaptive.Cubic{Beta: a.Cubic.Beta, ScaleConstant: a.Cubic.ScaleConstant}
		}
		c.Controller = k
	default:
		var k adaptive.AIMD
		if a.AIMD != nil {
			k = adaptive.AIMD{DecreaseFactor: a.AIMD.DecreaseFactor, IncreaseStep: a.AIMD.IncreaseStep, IncreaseInterval: time.Duration(a.AIMD.IncreaseInterval)}
		}
		c.Controller = k
	}
	return c
}

// validate lists every problem with a, each an *OptionError whose Field
// starts with "AdaptiveRate.".
func (a *AdaptiveRateOptions) validate() []error {
	var errs []error
	add := func(field string, value any, want string) {
		errs = append(errs, &OptionError{Field: "AdaptiveRate." + field, Value: value, Want: want})
	}
	cubic := strings.EqualFold(a.Controller, "cubic")
	switch {
	case a.Controller == "" || cubic || strings.EqualFold(a.Controller, "aimd"):
	default:
		add("Controller", a.Controller, `"aimd" (the default) or "cubic"`)
	}
	if a.RateController != nil && a.Controller != "" {
		add("Controller", a.Controller, `"" when RateController is set: one controller, never a silent pick`)
	}
	if a.Cubic != nil && (!cubic || a.RateController != nil) {
		add("Cubic", "set", `options only with Controller "cubic"`)
	}
	if a.AIMD != nil && (cubic || a.RateController != nil) {
		add("AIMD", "set", `options only with Controller "aimd" (or none)`)
	}
	if a.QueueLimit < -1 {
		add("QueueLimit", a.QueueLimit, "0 (500), -1 (refuse at once) or more")
	}
	c := a.config()
	if a.QueueLimit < -1 {
		c.QueueLimit = 0
	}
	for _, p := range c.Problems() {
		add(p.Field, p.Value, p.Want)
	}
	return errs
}

// AdaptiveRateLimiter is the throttle-driven adaptive rate limiter: a
// Limiter whose rate, in units per minute, is cut when the dependency
// throttles (reported with Lease.Throttle before Release) and climbs on
// successes while requests wait for units. Waiters leave in FIFO order; a
// lease reported Ignored or Dropped changes nothing.
//
// Its readers serve dashboards; each takes the limiter's lock briefly.
type AdaptiveRateLimiter struct {
	self     ownerRef // what its leases point back to
	mu       sync.Mutex
	core     *adaptive.Rate
	epoch    time.Time
	name     string
	m        *telemetry.Limiter
	waiters  map[uint64]*rateWaiter
	timer    *time.Timer
	counter  adaptive.InstanceCounter
	nextPoll atomic.Int64 // on the epoch axis
	// seen is the latest time read under mu: a quiet success (one that
	// can only be measured) is reported at it, which saves a clock read
	// on the fast path.
	seen time.Duration
}

type rateWaiter struct {
	ready   chan struct{}
	granted bool
	at      time.Duration
}

// AdaptiveRate returns an adaptive rate limiter configured by o, adjusted by
// opts (WithName, WithMeterProvider, WithAttributes), or the problems
// Validate finds. Options.QueueLimit does not apply: o has its own.
func AdaptiveRate(o AdaptiveRateOptions, opts ...Option) (*AdaptiveRateLimiter, error) {
	oo := Options{AdaptiveRate: &o}
	for _, opt := range opts {
		opt(&oo)
	}
	if err := oo.Validate(); err != nil {
		return nil, err
	}
	return newAdaptiveRateLimiter(oo)
}

func newAdaptiveRate(o Options) (Limiter, error) {
	l, err := newAdaptiveRateLimiter(o)
	if err != nil {
		return nil, err // not a nil *AdaptiveRateLimiter in a non-nil Limiter
	}
	return l, nil
}

// newAdaptiveRateLimiter builds the limiter of a validated o. Validate runs
// the engine's own checks, so NewRate's error is only passed on in case the
// two ever disagree.
func newAdaptiveRateLimiter(o Options) (*AdaptiveRateLimiter, error) {
	name := o.Name
	if name == "" {
		name = "adaptive_rate"
	}
	core, err := adaptive.NewRate(o.AdaptiveRate.config(), 0)
	if err != nil {
		return nil, err
	}
	l := &AdaptiveRateLimiter{core: core, epoch: time.Now(), name: name, m: telemetry.NewLimiter(o.MeterProvider, name, telemetry.KindAdaptiveRate, o.Attributes...)}
	if c := o.AdaptiveRate.InstanceCounter; c != nil {
		if _, static := c.(adaptive.StaticInstances); static {
			core.SetInstances(0, c.Instances())
		} else {
			l.counter = c
		}
	}
	l.m.SetLimit(core.Rate())
	l.self.leaseOwner = l
	l.m.CloseWhenUnreachable(l)
	return l, nil
}

func (l *AdaptiveRateLimiter) now() time.Duration { return time.Since(l.epoch) }

// Name is the limiter's name.
func (l *AdaptiveRateLimiter) Name() string { return l.name }

// Acquire asks for one unit.
func (l *AdaptiveRateLimiter) Acquire(ctx context.Context) (Lease, error) {
	return l.AcquireN(ctx, 1)
}

// AcquireN asks for cost units. Cost 0 is granted at once and its lease
// teaches nothing. A cost larger than the bucket waits until the bucket is
// full and then drives it below zero. When units are short the call waits
// in FIFO order; it is refused with a *RateLimitedError when QueueLimit
// requests wait already (ReasonQueueFull), when the wait would be longer
// than MaxWait (ReasonMaxWait, also once it has waited MaxWait), when the
// context's deadline comes before the expected wait ends (ReasonDeadline),
// or, with QueueLimit -1, at once (ReasonNoPermit). When ctx ends while
// waiting it returns ctx.Err() and leaves nothing behind.
func (l *AdaptiveRateLimiter) AcquireN(ctx context.Context, cost int) (Lease, error) {
	if cost <= 0 || cost > math.MaxInt32 {
		if cost == 0 {
			return Lease{}, nil
		}
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: math.MaxInt32}
	}
	now := l.now()
	l.mu.Lock()
	l.seen = max(l.seen, now)
	if l.core.Acquire(now, cost) {
		l.mu.Unlock()
		l.m.Acquired()
		return Lease{owner: &l.self, granted: now, spec: leaseSpec{cost: int32(cost)}}, nil
	}
	return l.wait(ctx, now, cost) // unlocks
}

// wait is AcquireN's slow path; it is called with l.mu held.
func (l *AdaptiveRateLimiter) wait(ctx context.Context, now time.Duration, cost int) (Lease, error) {
	if err := ctx.Err(); err != nil {
		l.mu.Unlock()
		return Lease{}, err
	}
	deadline := adaptive.NoDeadline
	if d, ok := ctx.Deadline(); ok {
		deadline = d.Sub(l.epoch)
	}
	id, wait, why := l.core.Enqueue(now, cost, deadline)
	if why != adaptive.NotRefused {
		l.mu.Unlock()
		l.m.Denied(why.String())
		return Lease{}, &RateLimitedError{Limiter: l.name, RetryAfter: wait, Reason: why.String()}
	}
	w := &rateWaiter{ready: make(chan struct{})}
	if l.waiters == nil {
		l.waiters = make(map[uint64]*rateWaiter)
	}
	l.waiters[id] = w
	l.m.QueueAdd(1)
	l.serviceLocked(now)
	l.mu.Unlock()

	select {
	case <-w.ready:
	case <-ctx.Done():
		l.mu.Lock()
		if l.core.Cancel(now, id) {
			delete(l.waiters, id)
			l.m.QueueAdd(-1)
			l.serviceLocked(l.now()) // the waiters behind may go now
			l.mu.Unlock()
			return Lease{}, ctx.Err()
		}
		l.mu.Unlock()
		<-w.ready // decided under the lock already
	}
	if !w.granted {
		l.m.Denied(ReasonMaxWait)
		return Lease{}, &RateLimitedError{Limiter: l.name, Reason: ReasonMaxWait}
	}
	l.m.Waited(w.at - now)
	l.m.Acquired()
	return Lease{owner: &l.self, granted: w.at, spec: leaseSpec{cost: int32(cost)}}, nil
}

// serviceLocked lets every waiter that can leave at now go, and sets the
// timer for the next.
func (l *AdaptiveRateLimiter) serviceLocked(now time.Duration) {
	for {
		w, ok := l.core.Dequeue(now)
		if !ok {
			break
		}
		if rw := l.waiters[w.ID]; rw != nil {
			delete(l.waiters, w.ID)
			rw.granted, rw.at = w.Granted, now
			close(rw.ready)
		}
		l.m.QueueAdd(-1)
	}
	at, ok := l.core.Next(now)
	if !ok {
		if l.timer != nil {
			l.timer.Stop()
		}
		return
	}
	d := max(at-now, 0)
	if l.timer == nil {
		l.timer = time.AfterFunc(d, l.onTimer)
	} else {
		l.timer.Reset(d)
	}
}

func (l *AdaptiveRateLimiter) onTimer() {
	l.mu.Lock()
	l.serviceLocked(l.now())
	l.mu.Unlock()
}

// release feeds the lease's outcome back: Success may raise the rate,
// Throttled may cut it and pause; Dropped and Ignored change nothing.
//
// A success that can only be measured (adaptive.Rate.QuietSuccess) is
// reported at the latest time the limiter has read rather than the clock:
// it then counts in the measured send rate's half-second period of that
// time, a little early when nothing else happened in between.
func (l *AdaptiveRateLimiter) release(ls Lease) {
	var ch adaptive.Change
	switch ls.spec.outcome {
	case Success:
		l.mu.Lock()
		now := l.seen
		if !l.core.QuietSuccess() {
			now = max(l.now(), now)
			l.seen = now
		}
		ch = l.core.OnSuccess(now, ls.granted, int(ls.spec.cost))
		if ch != 0 && l.core.Len() > 0 {
			l.serviceLocked(now)
		}
	case Throttled:
		l.m.Throttled()
		now := l.now()
		l.mu.Lock()
		ch = l.core.OnThrottled(now, ls.granted, int(ls.spec.cost), ls.retryAfter)
		if ch != 0 && l.core.Len() > 0 {
			l.serviceLocked(now)
		}
	default:
		return
	}
	var rate float64
	if ch != 0 {
		rate = l.core.Rate()
	}
	l.mu.Unlock()
	if ch != 0 {
		l.report(ch, rate)
	}
	if l.counter != nil {
		l.poll()
	}
}

func (l *AdaptiveRateLimiter) report(ch adaptive.Change, rate float64) {
	if ch&adaptive.ChangeCut != 0 {
		l.m.Cut()
	}
	if ch&adaptive.ChangePause != 0 {
		l.m.Paused()
	}
	if ch&adaptive.ChangeRate != 0 {
		l.m.SetLimit(rate)
	}
}

// poll asks the InstanceCounter for the count, at most once a second,
// outside the lock.
func (l *AdaptiveRateLimiter) poll() {
	now := l.now()
	next := l.nextPoll.Load()
	if int64(now) < next || !l.nextPoll.CompareAndSwap(next, int64(now+time.Second)) {
		return
	}
	l.SetInstances(l.counter.Instances())
}

// SetInstances sets how many processes share the budget (n ≥ 1; others are
// ignored). The current rate is rescaled so that the whole budget's rate is
// kept.
func (l *AdaptiveRateLimiter) SetInstances(n int) {
	l.rescale(func(now time.Duration) adaptive.Change { return l.core.SetInstances(now, n) })
}

// rescale applies set, a change of the rate's bounds, to the core under the
// lock; when the rate changed it serves the queue at the new rate and
// reports it.
func (l *AdaptiveRateLimiter) rescale(set func(now time.Duration) adaptive.Change) {
	now := l.now()
	l.mu.Lock()
	ch := set(now)
	if ch != 0 && l.core.Len() > 0 {
		l.serviceLocked(now)
	}
	rate := l.core.Rate()
	l.mu.Unlock()
	if ch != 0 {
		l.m.SetLimit(rate)
	}
}

// SetPublishedLimit caps the rate with the quota the dependency publishes,
// in units per minute for the whole budget (all instances together); 0
// removes the cap. The limiter then keeps the whole budget's rate at or
// below min(MaxUnitsPerMinute, PublishedLimitFraction × unitsPerMinute),
// shared by the instances, whatever the controller proposes; lowering the
// cap lowers the rate at once, raising or removing it lets the controller
// climb as usual. An HTTP layer that holds a quota guard calls it after
// each response with the limit the guard knows (quota.State.PerMinute), and
// with 0 when the guard knows none. See adaptive.Rate.SetPublishedLimit.
func (l *AdaptiveRateLimiter) SetPublishedLimit(unitsPerMinute float64) {
	l.rescale(func(now time.Duration) adaptive.Change { return l.core.SetPublishedLimit(now, unitsPerMinute) })
}

// PublishedLimit is the cap SetPublishedLimit last set, whole budget, units
// per minute (0: none).
func (l *AdaptiveRateLimiter) PublishedLimit() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.PublishedLimit()
}

// MaxRate is this process's maximum rate now, units per minute: the
// configured maximum, or the published cap when lower, over the instances.
func (l *AdaptiveRateLimiter) MaxRate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.MaxRate()
}

// Rate is this process's rate, in units per minute.
func (l *AdaptiveRateLimiter) Rate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.Rate()
}

// WholeRate is the rate of the whole budget: Rate × Instances.
func (l *AdaptiveRateLimiter) WholeRate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.WholeRate()
}

// Instances is the number of processes sharing the budget.
func (l *AdaptiveRateLimiter) Instances() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.Instances()
}

// Tokens is the units the bucket holds now: below zero after a large
// request, 0 during a pause.
func (l *AdaptiveRateLimiter) Tokens() float64 {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.Tokens(now)
}

// QueueLen is the number of requests waiting.
func (l *AdaptiveRateLimiter) QueueLen() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.Len()
}

// PausedUntil reports whether the limiter is in a Retry-After pause, and
// until when.
func (l *AdaptiveRateLimiter) PausedUntil() (time.Time, bool) {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.core.Paused(now) {
		return time.Time{}, false
	}
	return l.epoch.Add(l.core.PausedUntil()), true
}

// MeasuredRate is the measured send rate, in units per minute: response
// units per half-second period, smoothed with 0.8.
func (l *AdaptiveRateLimiter) MeasuredRate() float64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.MeasuredRate()
}

// Counts returns the engine's running totals: units admitted and answered,
// throttles, cuts, pauses, increases and refusals.
func (l *AdaptiveRateLimiter) Counts() adaptive.RateCounts {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.core.Counts()
}

// Close unregisters the limiter's metrics; a limiter that is dropped
// without Close does so when it is collected. The limiter keeps working:
// its timer runs only while requests wait (every change to the queue
// stops it once the queue is empty), so requests still queued are served
// or refused as usual and nothing is left running after the last.
func (l *AdaptiveRateLimiter) Close() { l.m.Close() }
