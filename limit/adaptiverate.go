package limit

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// AdaptiveRateLimiter is the throttle-driven adaptive rate limiter: a
// Limiter whose rate, in units per minute, is cut when the dependency
// throttles (reported with Lease.Report before Release) and climbs on
// successes while requests wait for units. Waiters leave in order of
// priority, FIFO within a level (see Priority); a
// lease reported adaptive.Ignored or adaptive.Dropped changes nothing.
//
// Its readers serve dashboards; each takes the limiter's lock briefly.
type AdaptiveRateLimiter struct {
	shell
	mu   sync.Mutex
	core *adaptive.Rate
	// queueLimit is Options.QueueLimit: the queue counts units, as every
	// shape's does, where the engine's limit counts requests (every request
	// holds a unit, so the engine's bound, set to the same number, never
	// binds first).
	queueLimit int64
	epoch      time.Time
	waiters    map[uint64]*rateWaiter
	timer      *time.Timer
	counter    adaptive.InstanceCounter
	nextPoll   atomic.Int64 // on the epoch axis
	// seen is the latest time read under mu: a quiet success (one that
	// can only be measured) is reported at it, which saves a clock read
	// on the fast path.
	seen time.Duration
	// reserve says background work is held out of a reserve of the rate
	// (adaptive.RateConfig.BackgroundReserve): the fast path then reads a
	// request's priority, which it otherwise never does.
	reserve bool
}

type rateWaiter struct {
	ready   chan struct{}
	granted bool
	shed    bool // refused to make room for a higher level
	at      time.Duration
	cost    int
}

// AdaptiveRate returns an adaptive rate limiter configured by c, adjusted by
// opts, or the problems Validate finds. The zero RateConfig is complete: a
// rate learned with AIMD from 1,125 units a minute, doubling every half
// second while requests wait until the first throttle, at most 10,000 a
// second, never below one a second, a bucket of 1 s of the rate
// (adaptive.RateConfig gives each default and why).
func AdaptiveRate(c adaptive.RateConfig, opts ...Option) (*AdaptiveRateLimiter, error) {
	oo := Options{AdaptiveRate: &c}
	for _, opt := range opts {
		opt(&oo)
	}
	if err := oo.Validate(); err != nil {
		return nil, err
	}
	return newAdaptiveRateLimiter(oo)
}

// newAdaptiveRateLimiter builds the limiter of a validated o.
func newAdaptiveRateLimiter(o Options) (*AdaptiveRateLimiter, error) {
	core, err := adaptive.NewRate(*o.AdaptiveRate, 0)
	if err != nil {
		return nil, err
	}
	l := &AdaptiveRateLimiter{core: core, queueLimit: int64(o.queueLimit()), epoch: time.Now(), reserve: o.AdaptiveRate.BackgroundReserve > 0}
	l.dress(o, metrics.KindAdaptiveRate, l)
	l.counter = o.AdaptiveRate.InstanceCounter
	l.metrics.SetLimit(core.Rate())
	sample(l.metrics, l, (*AdaptiveRateLimiter).figures)
	return l, nil
}

func (l *AdaptiveRateLimiter) now() time.Duration { return time.Since(l.epoch) }

// Acquire asks for one unit.
func (l *AdaptiveRateLimiter) Acquire(ctx context.Context) (Lease, error) {
	return l.AcquireN(ctx, 1)
}

// AcquireN asks for cost units. Cost 0 is granted at once and its lease
// teaches nothing. A cost larger than the bucket waits until the bucket is
// full and then drives it below zero. When units are short the call waits
// in order of priority (FIFO within a level; see Priority); it is refused with a *RateLimitedError when QueueLimit
// units wait already (telemetry.ReasonQueueFull), when the wait would be longer
// than MaxWait (telemetry.ReasonMaxWait, also once it has waited MaxWait), when the
// context's deadline comes before the expected wait ends (telemetry.ReasonDeadline),
// or, with QueueLimit 0, at once (telemetry.ReasonNoPermit). When ctx ends while
// waiting it leaves nothing behind and returns ctx.Err(), or for a deadline
// a *RateLimitedError (telemetry.ReasonDeadline) matching it.
func (l *AdaptiveRateLimiter) AcquireN(ctx context.Context, cost int) (Lease, error) {
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, max(cost, 0))
	}
	if cost <= 0 || cost > math.MaxInt32 {
		if cost == 0 {
			l.metrics.AcquiredN(cost)
			return Lease{}, nil
		}
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: math.MaxInt32}
	}
	if l.reserve {
		return l.acquireLevel(ctx, cost)
	}
	now := l.now()
	l.mu.Lock()
	l.seen = max(l.seen, now)
	ok, expected := l.core.TryAcquire(now, cost)
	if ok {
		l.mu.Unlock()
		l.metrics.AcquiredN(cost)
		return newLease(&l.self, now, cost), nil
	}
	return l.wait(ctx, now, cost, expected) // unlocks
}

// acquireLevel is AcquireN for a limiter that holds background work out of
// a reserve: the request's priority is read before it asks.
func (l *AdaptiveRateLimiter) acquireLevel(ctx context.Context, cost int) (Lease, error) {
	p, err := priorityOf(ctx)
	if err != nil {
		return Lease{}, err
	}
	now := l.now()
	l.mu.Lock()
	l.seen = max(l.seen, now)
	ok, expected := l.core.TryAcquireLevel(now, cost, p.level())
	if ok {
		l.mu.Unlock()
		l.metrics.AcquiredN(cost)
		return newLease(&l.self, now, cost), nil
	}
	return l.wait(ctx, now, cost, expected) // unlocks
}

// wait is AcquireN's slow path, for a request TryAcquire refused at now
// with the expected wait; it is called with l.mu held.
func (l *AdaptiveRateLimiter) wait(ctx context.Context, now time.Duration, cost int, expected time.Duration) (Lease, error) {
	if ctx.Err() != nil {
		l.mu.Unlock()
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	if l.queueLimit == 0 {
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonNoPermit, expected)
	}
	p, err := priorityOf(ctx)
	if err != nil {
		l.mu.Unlock()
		return Lease{}, err
	}
	if !l.shed(cost, p.level()) {
		next, _ := l.core.Next(now)
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonQueueFull, max(next-now, 0))
	}
	id, wait, ok := l.core.EnqueueLevel(now, cost, p.level())
	if !ok {
		l.mu.Unlock()
		return Lease{}, l.refuse(cost, telemetry.ReasonMaxWait, wait)
	}
	if d, ok := ctx.Deadline(); ok && wait > d.Sub(l.epoch)-now {
		// The wait at its place in the queue, which for a request that
		// passes others is shorter than TryAcquire's expected one. Lower
		// levels queued ahead of it are refused first, when that makes it
		// fit.
		var buf [8]uint64
		ids, wait, fits := l.core.ShedAhead(now, id, d.Sub(l.epoch)-now, buf[:0])
		if !fits {
			l.core.Cancel(now, id)
			l.mu.Unlock()
			return Lease{}, l.refuse(cost, telemetry.ReasonDeadline, wait)
		}
		l.wakeShed(ids)
	}
	w := &rateWaiter{ready: make(chan struct{}), cost: cost}
	if l.waiters == nil {
		l.waiters = make(map[uint64]*rateWaiter)
	}
	l.waiters[id] = w
	l.metrics.QueueAdd(int64(cost))
	l.serviceLocked(now)
	l.mu.Unlock()

	select {
	case <-w.ready:
	case <-ctx.Done():
		l.mu.Lock()
		if l.core.Cancel(now, id) {
			delete(l.waiters, id)
			l.metrics.QueueAdd(-int64(cost))
			l.serviceLocked(l.now()) // the waiters behind may go now
			l.mu.Unlock()
			return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
		}
		l.mu.Unlock()
		<-w.ready // decided under the lock already
	}
	if w.shed {
		return Lease{}, shedError(l.name, l.metrics, cost)
	}
	if !w.granted {
		l.metrics.DeniedN(telemetry.ReasonMaxWait, cost)
		return Lease{}, &RateLimitedError{Limiter: l.name, Reason: telemetry.ReasonMaxWait}
	}
	l.metrics.Waited(ctx, w.at-now)
	l.metrics.AcquiredN(cost)
	return newLease(&l.self, w.at, cost), nil
}

// shed makes room in the queue for cost units of level (see
// adaptive.Rate.Shed) and wakes the waiters it refuses; it reports whether
// the request fits. l.mu must be held.
func (l *AdaptiveRateLimiter) shed(cost, level int) bool {
	var buf [8]uint64
	ids, ok := l.core.Shed(cost, level, l.queueLimit, buf[:0])
	l.wakeShed(ids)
	return ok
}

// wakeShed wakes, refused as shed, the waiters the core took out. l.mu
// must be held.
func (l *AdaptiveRateLimiter) wakeShed(ids []uint64) {
	for _, id := range ids {
		if rw := l.waiters[id]; rw != nil {
			delete(l.waiters, id)
			rw.shed = true
			l.metrics.QueueAdd(-int64(rw.cost))
			close(rw.ready)
		}
	}
}

func (l *AdaptiveRateLimiter) refuse(cost int, reason string, retryAfter time.Duration) error {
	l.metrics.DeniedN(reason, cost)
	return &RateLimitedError{Limiter: l.name, RetryAfter: retryAfter, Reason: reason}
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
		l.metrics.QueueAdd(-int64(w.Cost))
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

// release feeds the lease's outcome back: adaptive.Success may raise the rate,
// adaptive.Throttled may cut it and pause; adaptive.Dropped and adaptive.Ignored change nothing.
//
// A success that can only be measured (adaptive.Rate.QuietSuccess) is
// reported at the latest time the limiter has read rather than the clock:
// it then counts in the measured send rate's half-second period of that
// time, a little early when nothing else happened in between.
func (l *AdaptiveRateLimiter) release(ls Lease) {
	var ch adaptive.Change
	switch ls.spec.outcome() {
	case adaptive.Success:
		l.mu.Lock()
		now := l.seen
		if !l.core.QuietSuccess() {
			now = max(l.now(), now)
			l.seen = now
		}
		ch = l.core.Release(now, ls.granted, int(ls.spec.cost), adaptive.Success, 0)
		if ch != 0 && l.core.Len() > 0 {
			l.serviceLocked(now)
		}
	case adaptive.Throttled:
		l.metrics.Throttled()
		now := l.now()
		l.mu.Lock()
		ch = l.core.Release(now, ls.granted, int(ls.spec.cost), adaptive.Throttled, ls.spec.retryAfter())
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
		l.metrics.Cut()
	}
	if ch&adaptive.ChangePause != 0 {
		l.metrics.Paused()
	}
	if ch&adaptive.ChangeRate != 0 {
		l.metrics.SetLimit(rate)
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
		l.metrics.SetLimit(rate)
	}
}

// SetPublishedLimit gives the limiter the quota the dependency publishes:
// limit units per window for the whole budget (all instances together); a
// limit or window of 0 takes it away. Published figures win over learning:
// while it has a quota the limiter's rate is its share of
// min(MaxUnitsPerMinute, PublishedLimitFraction × the quota's rate), its
// bucket holds a window of it, and throttles do not cut it; taken away, it
// learns on from there. An HTTP layer that holds a quota guard calls it
// after each response with the limit and window the guard knows
// (quota.State), and with 0 when the guard knows none. See
// adaptive.Rate.SetPublishedLimit.
func (l *AdaptiveRateLimiter) SetPublishedLimit(limit float64, window time.Duration) {
	perMinute := 0.0
	if window > 0 {
		perMinute = limit * float64(time.Minute) / float64(window)
	}
	l.rescale(func(now time.Duration) adaptive.Change { return l.core.SetPublishedLimit(now, perMinute, window) })
}

// AdaptiveRateState is what an adaptive rate limiter knows at one moment,
// as AdaptiveRateLimiter.State reads it. Rates are in units per minute.
type AdaptiveRateState struct {
	// Rate is this process's rate; WholeRate the whole budget's, Rate ×
	// Instances.
	Rate, WholeRate float64
	// MaxRate is this process's maximum rate now: the configured maximum,
	// or the published cap when lower, over the instances.
	MaxRate float64
	// PublishedLimit is the cap SetPublishedLimit last set, whole budget
	// (0: none).
	PublishedLimit float64
	// MeasuredRate is the measured send rate: response units per
	// half-second period, smoothed with 0.8.
	MeasuredRate float64
	// Tokens is the units the bucket holds: below zero after a large
	// request, 0 during a pause.
	Tokens float64
	// Instances is the number of processes sharing the budget.
	Instances int
	// Queued is the number of requests waiting.
	Queued int
	// PausedUntil is the end of the Retry-After pause the limiter is in;
	// the zero time when it is in none.
	PausedUntil time.Time
	// Counts are the engine's running totals: units admitted and answered,
	// throttles, cuts, pauses, increases and refusals.
	Counts adaptive.RateCounts
}

// State returns what the limiter knows now.
func (l *AdaptiveRateLimiter) State() AdaptiveRateState {
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.stateLocked(now)
}

// stateLocked is State at now, under l.mu.
func (l *AdaptiveRateLimiter) stateLocked(now time.Duration) AdaptiveRateState {
	s := AdaptiveRateState{
		Rate:           l.core.Rate(),
		WholeRate:      l.core.WholeRate(),
		MaxRate:        l.core.MaxRate(),
		PublishedLimit: l.core.PublishedLimit(),
		MeasuredRate:   l.core.MeasuredRate(),
		Tokens:         l.core.Tokens(now),
		Instances:      l.core.Instances(),
		Queued:         l.core.Len(),
		Counts:         l.core.Counts(),
	}
	if now < l.core.PausedUntil() {
		s.PausedUntil = l.epoch.Add(l.core.PausedUntil())
	}
	return s
}

// Close unregisters the limiter's metrics; a limiter that is dropped
// without Close does so when it is collected. The limiter keeps working:
// its timer runs only while requests wait (every change to the queue
// stops it once the queue is empty), so requests still queued are served
// or refused as usual and nothing is left running after the last.
func (l *AdaptiveRateLimiter) Close() { l.metrics.Close() }

// figures reports the bucket, the instance share, the ceiling, the
// published quota, the measured send rate and the pause.
func (l *AdaptiveRateLimiter) figures(f metrics.Figures) {
	now := l.now()
	l.mu.Lock()
	s, size := l.stateLocked(now), l.core.BucketSize()
	l.mu.Unlock()
	used(f, size, s.Tokens)
	f.Set(metrics.Instances, float64(s.Instances))
	f.Set(metrics.BudgetRate, s.WholeRate)
	f.Set(metrics.Ceiling, s.MaxRate)
	f.Set(metrics.PublishedRate, s.PublishedLimit)
	f.Set(metrics.SendRate, s.MeasuredRate)
	f.Set(metrics.Paused, b2f(!s.PausedUntil.IsZero()))
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
