package adaptive

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// The defaults of the throttle-driven rate limiter. Rates are units per
// minute for the whole budget (all instances together).
//
// The rates come from SharePoint Online's published per-app, per-tenant
// limits of 1,250 to 6,250 resource units a minute by tenant size (the "SharePoint default
// rates" of the seeds; see /work/shared/research/headers-and-distributed.md):
// the maximum is 90% of the largest tier (5,625, which the seeds' table
// shows as 2,812.5 per process for 2 instances), the initial rate 90% of
// the smallest (1,125: safe for a tenant of any size), and the minimum one
// unit a second (60), so a limiter never stalls.
const (
	DefaultMinUnitsPerMinute     = 60.0
	DefaultMaxUnitsPerMinute     = 5625.0
	DefaultInitialUnitsPerMinute = 1125.0
	DefaultBurst                 = 10 * time.Second  // the bucket holds 10 s of the rate
	DefaultQueueLimit            = 500               // waiting requests
	DefaultMaxWait               = 100 * time.Second // longest wait in the queue
	DefaultDecreaseCooldown      = 5 * time.Second   // least time between two cuts
	DefaultMaxPause              = 30 * time.Second  // longest Retry-After pause
	// DefaultPublishedLimitFraction is the share of a published quota the
	// rate may use (Rate.SetPublishedLimit): 1 − the quota guard's default
	// reserve of 2% (limit/quota), so that the rate limiter and the guard
	// agree on what is left for others. docs/simulator.md shows 0.97 losing
	// throughput and 0.99 keeping less margin for another client.
	DefaultPublishedLimitFraction = 0.98
)

// NoDeadline is the deadline of a request that has none (Rate.Enqueue).
const NoDeadline = time.Duration(math.MaxInt64)

// halfSecond is the width of the periods of the measured send rate
// (aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go: floor(t×2)/2).
const halfSecond = 500 * time.Millisecond

// epsilon absorbs float rounding when tokens are compared with a cost.
const epsilon = 1e-9

// RateConfig configures a Rate. Unlike limit.AdaptiveRateOptions, no zero
// field means a default here: start from DefaultRateConfig. Rates are for the
// whole budget, in units per minute; the limiter takes 1/Instances of them.
type RateConfig struct {
	MinUnitsPerMinute     float64
	MaxUnitsPerMinute     float64
	InitialUnitsPerMinute float64
	// Burst is how much of the rate the bucket holds (at least 1 unit).
	Burst time.Duration
	// QueueLimit is how many requests may wait; 0 refuses at once
	// (RefusedNoUnits) instead of queueing.
	QueueLimit int
	// MaxWait is the longest a request may wait in the queue; above 0 when
	// QueueLimit is.
	MaxWait time.Duration
	// DecreaseCooldown is the least time between two cuts.
	DecreaseCooldown time.Duration
	// MaxPause caps the pause after a throttle with a Retry-After; 0 never
	// pauses.
	MaxPause time.Duration
	// Controller sets the rate; nil means AIMD{}.
	Controller RateController
	// Instances is how many processes share the budget; 0 means 1.
	Instances int
	// Disabled measures only: every request is admitted at once, the rate
	// never changes, units and throttles are still counted.
	Disabled bool
	// PublishedLimitFraction is the share of a published quota the whole
	// budget may use once Rate.SetPublishedLimit is given one: the maximum
	// becomes min(MaxUnitsPerMinute, PublishedLimitFraction × published).
	// In (0, 1]; 0 means DefaultPublishedLimitFraction (0.98), the one field
	// whose zero is a default, so that configurations written before it
	// existed keep working.
	PublishedLimitFraction float64
}

// DefaultRateConfig returns the defaults, with AIMD.
func DefaultRateConfig() RateConfig {
	return RateConfig{
		MinUnitsPerMinute:     DefaultMinUnitsPerMinute,
		MaxUnitsPerMinute:     DefaultMaxUnitsPerMinute,
		InitialUnitsPerMinute: DefaultInitialUnitsPerMinute,
		Burst:                 DefaultBurst,
		QueueLimit:            DefaultQueueLimit,
		MaxWait:               DefaultMaxWait,
		DecreaseCooldown:      DefaultDecreaseCooldown,
		MaxPause:              DefaultMaxPause,
		Controller:            AIMD{},
		Instances:             1,

		PublishedLimitFraction: DefaultPublishedLimitFraction,
	}
}

// A Problem is one thing wrong with a RateConfig: the field, its value and
// what would be right. limit turns each into a *limit.OptionError.
type Problem struct {
	Field string // a RateConfig field name, e.g. "MaxUnitsPerMinute"
	Value any
	Want  string
}

func (p *Problem) Error() string {
	return fmt.Sprintf("adaptive: %s = %v: want %s", p.Field, p.Value, p.Want)
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }

// Problems lists every problem with c; nil when NewRate would succeed.
func (c *RateConfig) Problems() []*Problem {
	var ps []*Problem
	add := func(field string, value any, want string) {
		ps = append(ps, &Problem{Field: field, Value: value, Want: want})
	}
	rates := []struct {
		name string
		v    float64
	}{{"MinUnitsPerMinute", c.MinUnitsPerMinute}, {"MaxUnitsPerMinute", c.MaxUnitsPerMinute}, {"InitialUnitsPerMinute", c.InitialUnitsPerMinute}}
	ok := true
	for _, r := range rates {
		if !(r.v > 0) || !finite(r.v) {
			add(r.name, r.v, "a rate above 0 units per minute")
			ok = false
		}
	}
	if ok {
		if c.MinUnitsPerMinute > c.MaxUnitsPerMinute {
			add("MinUnitsPerMinute", c.MinUnitsPerMinute, fmt.Sprintf("at most MaxUnitsPerMinute (%v)", c.MaxUnitsPerMinute))
		} else if c.InitialUnitsPerMinute < c.MinUnitsPerMinute || c.InitialUnitsPerMinute > c.MaxUnitsPerMinute {
			add("InitialUnitsPerMinute", c.InitialUnitsPerMinute, fmt.Sprintf("between MinUnitsPerMinute (%v) and MaxUnitsPerMinute (%v)", c.MinUnitsPerMinute, c.MaxUnitsPerMinute))
		}
	}
	if c.Burst <= 0 {
		add("Burst", c.Burst, "a duration above 0, such as \"10s\"")
	}
	if c.QueueLimit < 0 {
		add("QueueLimit", c.QueueLimit, "0 (refuse at once) or more")
	}
	if c.MaxWait < 0 || (c.QueueLimit > 0 && c.MaxWait == 0) {
		add("MaxWait", c.MaxWait, "a duration above 0 when requests may queue")
	}
	if c.DecreaseCooldown < 0 {
		add("DecreaseCooldown", c.DecreaseCooldown, "0 or more")
	}
	if c.MaxPause < 0 {
		add("MaxPause", c.MaxPause, "0 (never pause) or more")
	}
	if c.Instances < 0 {
		add("Instances", c.Instances, "1 or more (0 means 1)")
	}
	if f := c.PublishedLimitFraction; !(f >= 0 && f <= 1) {
		add("PublishedLimitFraction", f, "a fraction in (0, 1], such as 0.98 (0 means 0.98)")
	}
	switch ctl := c.Controller.(type) {
	case AIMD:
		ps = append(ps, ctl.problems()...)
	case Cubic:
		ps = append(ps, ctl.problems()...)
	}
	return ps
}

func (a AIMD) problems() []*Problem {
	var ps []*Problem
	if f := a.DecreaseFactor; f != 0 && (!(f > 0 && f < 1)) {
		ps = append(ps, &Problem{"AIMD.DecreaseFactor", f, "a factor between 0 and 1, such as 0.7"})
	}
	if s := a.IncreaseStep; !(s >= 0) || !finite(s) {
		ps = append(ps, &Problem{"AIMD.IncreaseStep", s, "a step above 0 units per minute"})
	}
	if a.IncreaseInterval < 0 {
		ps = append(ps, &Problem{"AIMD.IncreaseInterval", a.IncreaseInterval, "a duration above 0, such as \"10s\""})
	}
	return ps
}

func (c Cubic) problems() []*Problem {
	var ps []*Problem
	if b := c.Beta; b != 0 && (!(b > 0 && b < 1)) {
		ps = append(ps, &Problem{"Cubic.Beta", b, "a factor between 0 and 1, such as 0.7"})
	}
	if s := c.ScaleConstant; !(s >= 0) || !finite(s) {
		ps = append(ps, &Problem{"Cubic.ScaleConstant", s, "a constant above 0, such as 0.4"})
	}
	return ps
}

// Refusal says why Enqueue did not queue a request.
type Refusal uint8

// The refusals; their String values match limit's Reason constants.
const (
	NotRefused     Refusal = iota
	RefusedNoUnits         // no units free and QueueLimit is 0
	RefusedQueueFull
	RefusedMaxWait
	RefusedDeadline
)

var refusalNames = [...]string{"", "no_permit", "queue_full", "max_wait", "deadline"}

func (r Refusal) String() string {
	if int(r) < len(refusalNames) {
		return refusalNames[r]
	}
	return fmt.Sprintf("refusal(%d)", uint8(r))
}

// Change says what a call changed, so that a shell can report it.
type Change uint8

// The changes; a call may report several.
const (
	ChangeRate  Change = 1 << iota // the rate changed (even to the same value, from a controller)
	ChangeCut                      // a throttle cut the rate
	ChangePause                    // a throttle started or lengthened a pause
)

// Waiter is a request that left the queue (Rate.Dequeue).
type Waiter struct {
	ID   uint64
	Cost int
	// Granted is true when the waiter got its units; false when it waited
	// MaxWait without getting them (refuse it with RefusedMaxWait).
	Granted bool
}

// RateCounts are running totals, for tests, the simulator and dashboards.
type RateCounts struct {
	Units     int64 // units admitted (in Disabled mode too)
	Responses int64 // units of responses (successes and throttles)
	Throttles int64
	Cuts      int64
	Pauses    int64
	Increases int64 // rates returned by OnSuccess
	Refused   [RefusedDeadline + 1]int64
}

type waiter struct {
	id       uint64
	cost     int
	enqueued time.Duration
}

// Rate is the deterministic core of the throttle-driven adaptive rate
// limiter (seeds 000 and 001): a token bucket in units with a FIFO queue of
// waiters, the throttle rules (cooldown, "sent after the last cut", pause)
// and a RateController.
//
// Every method takes now, the current time as an offset on the caller's
// monotonic axis (any origin; it must not go backwards). Rate reads no
// clock, starts no goroutine and sets no timer: the shell (limit's
// AdaptiveRateLimiter) adds a mutex, real time and timers; the simulator
// drives it on virtual time. A Rate is not safe for concurrent use.
//
// Rates are this process's share in units per minute unless a name says
// "whole".
type Rate struct {
	cfg      RateConfig
	ctl      RateController
	n        int
	disabled bool
	// builtin is true for AIMD and Cubic, which never change the rate on a
	// success unless requests waited: OnSuccess skips them otherwise.
	builtin bool

	// this process's share, units per minute
	rate, minRate, maxRate, initRate float64

	published float64 // the published quota, whole budget, units per minute; 0: none
	pubFrac   float64 // PublishedLimitFraction, default applied

	perNs    float64 // rate in units per nanosecond
	size     float64 // bucket size, units (≥ 1)
	burstMin float64 // Burst in minutes
	tokens   float64
	lastFill time.Duration // tokens are exact at lastFill; in the future during a pause

	created      time.Duration
	cutOnce      bool
	lastCut      time.Duration
	beforeCut    float64 // RateBeforeLastDecrease
	sendAtCut    float64 // SendRateAtLastDecrease
	pausedAcc    time.Duration
	lastIncrease time.Duration
	waited       bool
	pauseUntil   time.Duration

	mPeriod  time.Duration // start of the current half-second period
	mUnits   float64
	measured float64 // units per second

	q      []waiter
	qHead  int
	qUnits int64
	nextID uint64

	counts RateCounts
}

// NewRate returns a Rate configured by c, created at now with a full
// bucket, or the problems Problems lists, joined.
func NewRate(c RateConfig, now time.Duration) (*Rate, error) {
	if ps := c.Problems(); len(ps) > 0 {
		errs := make([]error, len(ps))
		for i, p := range ps {
			errs[i] = p
		}
		return nil, errors.Join(errs...)
	}
	r := &Rate{cfg: c, ctl: c.Controller, n: max(c.Instances, 1), disabled: c.Disabled, pubFrac: c.PublishedLimitFraction}
	if r.pubFrac == 0 {
		r.pubFrac = DefaultPublishedLimitFraction
	}
	if r.ctl == nil {
		r.ctl = AIMD{}
	}
	switch r.ctl.(type) {
	case AIMD, Cubic:
		r.builtin = true
	}
	r.burstMin = c.Burst.Minutes()
	r.created, r.lastCut, r.lastIncrease, r.lastFill = now, now, now, now
	r.mPeriod = floorHalf(now)
	r.share()
	r.rate = r.initRate
	r.beforeCut = r.initRate
	r.resize()
	r.tokens = r.size
	return r, nil
}

// share sets this process's share of the configured rates, under the
// published cap (SetPublishedLimit).
func (r *Rate) share() {
	n := float64(r.n)
	hi := r.wholeMax()
	r.minRate = min(r.cfg.MinUnitsPerMinute, hi) / n
	r.maxRate = hi / n
	r.initRate = min(r.cfg.InitialUnitsPerMinute, hi) / n
}

// wholeMax is the whole budget's maximum: MaxUnitsPerMinute, or the
// published cap when lower.
func (r *Rate) wholeMax() float64 {
	if r.published > 0 {
		return min(r.cfg.MaxUnitsPerMinute, r.pubFrac*r.published)
	}
	return r.cfg.MaxUnitsPerMinute
}

func (r *Rate) resize() {
	r.perNs = r.rate / float64(time.Minute)
	r.size = max(r.rate*r.burstMin, 1)
	r.tokens = min(r.tokens, r.size)
}

func floorHalf(t time.Duration) time.Duration {
	m := t % halfSecond
	if m < 0 {
		m += halfSecond
	}
	return t - m
}

// refill brings the tokens up to now at the current rate.
func (r *Rate) refill(now time.Duration) {
	if now <= r.lastFill {
		return
	}
	r.tokens = min(r.size, r.tokens+float64(now-r.lastFill)*r.perNs)
	r.lastFill = now
}

func (r *Rate) tokensAt(now time.Duration) float64 {
	if now <= r.lastFill {
		return r.tokens
	}
	return min(r.size, r.tokens+float64(now-r.lastFill)*r.perNs)
}

// need is what the bucket must hold before a request of cost goes: its
// cost, or a full bucket for a request larger than the bucket.
func (r *Rate) need(cost int) float64 { return min(float64(cost), r.size) }

// setRate changes the rate at now, keeping the tokens up to the new size.
func (r *Rate) setRate(now time.Duration, rate float64) {
	r.refill(now)
	r.rate = rate
	r.resize()
}

// ---- admission ----

// Acquire admits a request of cost units at now if it can go at once: cost
// 0 (which never waits and changes nothing), Disabled mode, or nobody queued,
// no pause, and the bucket holding the cost (a full bucket for a request
// larger than the bucket). It takes the cost from the bucket, which a large
// request drives below zero. On false nothing changed: queue the request
// with Enqueue. cost must not be negative.
func (r *Rate) Acquire(now time.Duration, cost int) bool {
	if cost <= 0 {
		return true
	}
	if r.disabled {
		r.counts.Units += int64(cost)
		return true
	}
	if r.qHead < len(r.q) {
		return false
	}
	r.refill(now)
	if r.tokens+epsilon < r.need(cost) {
		return false
	}
	r.tokens -= float64(cost)
	r.counts.Units += int64(cost)
	return true
}

// Enqueue queues a request of cost (≥ 1) units that Acquire did not admit,
// and marks that requests waited. It returns the waiter's ID and the wait
// expected at the current rate; or, with a Refusal, no ID and the suggested
// retry-after:
//
//   - RefusedNoUnits when QueueLimit is 0: wait is when the units would be
//     there;
//   - RefusedQueueFull when QueueLimit requests wait already: wait is when
//     the head is expected to leave;
//   - RefusedMaxWait when the expected wait is above MaxWait: wait is how
//     much above;
//   - RefusedDeadline when now plus the expected wait is after deadline
//     (NoDeadline for none): wait is the expected wait.
func (r *Rate) Enqueue(now time.Duration, cost int, deadline time.Duration) (id uint64, wait time.Duration, why Refusal) {
	r.waited = true
	r.refill(now)
	wait = r.waitFor(now, r.qUnits, cost)
	switch {
	case r.cfg.QueueLimit == 0:
		why = RefusedNoUnits
	case r.Len() >= r.cfg.QueueLimit:
		why = RefusedQueueFull
		wait, _ = r.Next(now)
		wait -= now
	case wait > r.cfg.MaxWait:
		why = RefusedMaxWait
		wait -= r.cfg.MaxWait
	case deadline < NoDeadline && wait > deadline-now:
		why = RefusedDeadline
	default:
		r.nextID++
		r.q = append(r.q, waiter{id: r.nextID, cost: cost, enqueued: now})
		r.qUnits += int64(cost)
		return r.nextID, wait, NotRefused
	}
	r.counts.Refused[why]++
	return 0, wait, why
}

// waitFor is how long, from now, until a request of cost can go behind
// ahead units of waiters, at the current rate.
func (r *Rate) waitFor(now time.Duration, ahead int64, cost int) time.Duration {
	start := max(now, r.lastFill)
	// The waiters ahead go in turn, each once the bucket holds its need
	// (≤ its cost), so the last goes once the bucket has gathered all
	// their costs and its own need: exact while the rate holds.
	deficit := float64(ahead) + r.need(cost) - r.tokensAt(now)
	if deficit <= epsilon {
		return start - now
	}
	return start - now + durationFor(deficit, r.perNs)
}

// durationFor is the time to gather units at perNs, rounded up.
func durationFor(units, perNs float64) time.Duration {
	d := math.Ceil(units / perNs)
	if d >= float64(math.MaxInt64/2) {
		return time.Duration(math.MaxInt64 / 2)
	}
	return time.Duration(d)
}

// Next reports when the queue's head can next leave: when its units will
// be there at the current rate, or when it will have waited MaxWait,
// whichever is first. ok is false when nobody waits. A shell sets its timer
// for at and calls Dequeue then; any rate change moves at, so ask again
// after each call that reports a Change.
func (r *Rate) Next(now time.Duration) (at time.Duration, ok bool) {
	if r.qHead >= len(r.q) {
		return 0, false
	}
	h := r.q[r.qHead]
	at = now + r.waitFor(now, 0, h.cost)
	if r.cfg.MaxWait > 0 {
		at = min(at, h.enqueued+r.cfg.MaxWait)
	}
	return max(at, now), true
}

// Dequeue removes the queue's head if it can leave at now: Granted with its
// units taken from the bucket, or not Granted once it has waited MaxWait.
// Call it until ok is false: several waiters may leave at once.
func (r *Rate) Dequeue(now time.Duration) (w Waiter, ok bool) {
	if r.qHead >= len(r.q) {
		return Waiter{}, false
	}
	h := r.q[r.qHead]
	r.refill(now)
	switch {
	case now >= r.lastFill && r.tokens+epsilon >= r.need(h.cost):
		r.tokens -= float64(h.cost)
		r.counts.Units += int64(h.cost)
		w.Granted = true
	case r.cfg.MaxWait > 0 && now-h.enqueued >= r.cfg.MaxWait:
		r.counts.Refused[RefusedMaxWait]++
	default:
		return Waiter{}, false
	}
	r.pop()
	w.ID, w.Cost = h.id, h.cost
	return w, true
}

func (r *Rate) pop() {
	r.qUnits -= int64(r.q[r.qHead].cost)
	r.q[r.qHead] = waiter{}
	r.qHead++
	if r.qHead == len(r.q) {
		r.q, r.qHead = r.q[:0], 0
	} else if r.qHead >= 64 && r.qHead*2 >= len(r.q) {
		n := copy(r.q, r.q[r.qHead:])
		clear(r.q[n:])
		r.q, r.qHead = r.q[:n], 0
	}
}

// Cancel removes waiter id from the queue (its context ended) and reports
// whether it was there. No units were taken for it. The waiters behind may
// now be able to leave: call Dequeue.
func (r *Rate) Cancel(now time.Duration, id uint64) bool {
	for i := r.qHead; i < len(r.q); i++ {
		if r.q[i].id == id {
			r.qUnits -= int64(r.q[i].cost)
			copy(r.q[i:], r.q[i+1:])
			r.q[len(r.q)-1] = waiter{}
			r.q = r.q[:len(r.q)-1]
			if r.qHead == len(r.q) {
				r.q, r.qHead = r.q[:0], 0
			}
			return true
		}
	}
	return false
}

// ---- feedback ----

// measure counts a response of cost units at now into the measured send
// rate, as the AWS SDK does (aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go,
// updateMeasuredRate): the units of a period are counted until a response
// lands in a later half-second period, which closes it; the rate of the
// closed periods is smoothed with 0.8.
func (r *Rate) measure(now time.Duration, cost int) {
	r.counts.Responses += int64(cost)
	r.mUnits += float64(cost)
	if p := floorHalf(now); p > r.mPeriod {
		cur := r.mUnits / (p - r.mPeriod).Seconds()
		r.measured = sendRateSmoothing*cur + (1-sendRateSmoothing)*r.measured
		r.mUnits = 0
		r.mPeriod = p
	}
}

// OnSuccess reports at now a response that was not a throttle and had a
// status below 500, for a request of cost units sent at sentAt (the rules
// do not read sentAt today). It counts the units into the measured send
// rate, and, unless Disabled or paused, asks the controller for a new rate.
// Report nothing for an ignored outcome (a network error, a 5xx that is not
// a throttle): it changes nothing.
func (r *Rate) OnSuccess(now, sentAt time.Duration, cost int) Change {
	r.measure(now, cost)
	if r.disabled || now < r.pauseUntil || (r.builtin && !r.waited && r.qHead == len(r.q)) {
		return 0
	}
	rate, ok := r.ctl.OnSuccess(r.State(now))
	if !ok {
		return 0
	}
	if rate != rate { // NaN: no change
		return 0
	}
	r.setRate(now, min(max(rate, r.minRate), r.maxRate))
	r.lastIncrease, r.waited = now, false
	r.counts.Increases++
	return ChangeRate
}

// QuietSuccess reports whether a success now could only be measured: the
// limiter is Disabled, or its controller is AIMD or Cubic (which rise only
// after waits) and no request has waited since the last change. A shell may
// then report the success with the latest time it has read instead of
// reading the clock again: the only effect of the time is on which
// half-second period of the measured send rate the units count in.
func (r *Rate) QuietSuccess() bool {
	return r.disabled || (r.builtin && !r.waited && r.qHead == len(r.q))
}

// OnThrottled reports at now a throttle of a request of cost units sent at
// sentAt, with the server's Retry-After (0 if none). In seed 000's order:
//
//  1. it restarts the increase clock and forgets that requests waited;
//  2. it cuts the rate on the first throttle, or when DecreaseCooldown has
//     passed since the last cut and the request was sent after it: the
//     controller proposes, the limiter never raises on a throttle and never
//     goes below the minimum;
//  3. with a Retry-After and MaxPause above 0, it pauses for
//     min(Retry-After, MaxPause): nothing is admitted, the bucket restarts
//     empty at the end, and no increase happens before it.
//
// In Disabled mode it only counts the throttle and its units.
func (r *Rate) OnThrottled(now, sentAt time.Duration, cost int, retryAfter time.Duration) Change {
	r.measure(now, cost)
	r.counts.Throttles++
	if r.disabled {
		return 0
	}
	var ch Change
	r.lastIncrease, r.waited = max(now, r.pauseUntil), false
	if !r.cutOnce || (now-r.lastCut >= r.cfg.DecreaseCooldown && sentAt > r.lastCut) {
		p := r.ctl.OnThrottled(r.State(now))
		nr := r.rate
		if p < nr { // NaN keeps the rate
			nr = p
		}
		nr = max(nr, r.minRate)
		r.beforeCut, r.sendAtCut = r.rate, r.MeasuredRate()
		r.cutOnce, r.lastCut = true, now
		r.pausedAcc = max(r.pauseUntil-now, 0) // the rest of a pause in progress
		r.setRate(now, nr)
		r.counts.Cuts++
		ch |= ChangeCut | ChangeRate
	}
	if retryAfter > 0 && r.cfg.MaxPause > 0 {
		until := now + min(retryAfter, r.cfg.MaxPause)
		if until > r.pauseUntil {
			r.refill(now)
			r.pausedAcc += until - max(now, r.pauseUntil)
			r.pauseUntil = until
			r.tokens = min(r.tokens, 0)
			r.lastFill = until
			r.lastIncrease = until
			r.counts.Pauses++
			ch |= ChangePause
		}
	}
	return ch
}

// SetInstances sets how many processes share the budget (n ≥ 1; others are
// ignored). The minimum, maximum and initial rates take the new share, and
// the current rate, the rate before the last cut and the send rate at the
// last cut are rescaled so that the whole budget's rate is kept; the bucket
// keeps its tokens up to its new size.
func (r *Rate) SetInstances(now time.Duration, n int) Change {
	if n < 1 || n == r.n {
		return 0
	}
	whole := r.rate * float64(r.n)
	f := float64(r.n) / float64(n)
	r.beforeCut *= f
	r.sendAtCut *= f
	r.n = n
	r.share()
	r.setRate(now, min(max(whole/float64(n), r.minRate), r.maxRate))
	return ChangeRate
}

// SetPublishedLimit caps the whole budget's maximum at now with the quota
// the API publishes, in units per minute for the whole budget (all
// instances together); 0 removes the cap. Anything that is not a finite
// number above 0 (a negative, NaN, +Inf) removes it too.
//
// With a cap P the limiter works as if MaxUnitsPerMinute were
//
//	M = min(MaxUnitsPerMinute, PublishedLimitFraction × P)
//
// and MinUnitsPerMinute min(MinUnitsPerMinute, M) (the published quota wins
// over the floor: a rate above it can only meet throttles). Every rate is
// then shared by the instances as usual: this process's maximum is
// M ÷ Instances, which RateState.MaxRate shows to the controller and the
// limiter enforces on whatever any controller returns.
//
// A change of cap is applied as an instance change is (SetInstances): the
// shares are recomputed at once and the current rate is kept, clamped into
// the new [minimum, maximum]. Lowering the cap below the rate lowers the
// rate (no cut is counted and the cooldown does not restart); raising or
// removing it never raises the rate: the controller climbs as usual, the
// cap is a ceiling, not a target. The rate before the last cut and the send
// rate at the last cut are kept, so CUBIC's curve still aims at the rate it
// had found. It reports ChangeRate when the cap changed, 0 otherwise.
func (r *Rate) SetPublishedLimit(now time.Duration, unitsPerMinute float64) Change {
	p := unitsPerMinute
	if !(p > 0) || math.IsInf(p, 1) {
		p = 0
	}
	if p == r.published {
		return 0
	}
	r.published = p
	r.share()
	r.setRate(now, min(max(r.rate, r.minRate), r.maxRate))
	return ChangeRate
}

// PublishedLimit is the published quota SetPublishedLimit last set, whole
// budget, units per minute (0: none).
func (r *Rate) PublishedLimit() float64 { return r.published }

// MaxRate is this process's maximum rate, units per minute:
// min(MaxUnitsPerMinute, PublishedLimitFraction × PublishedLimit) ÷
// Instances.
func (r *Rate) MaxRate() float64 { return r.maxRate }

// ---- readers ----

// State is the RateState a controller would see at now.
func (r *Rate) State(now time.Duration) RateState {
	paused := r.pausedAcc
	if now < r.pauseUntil {
		paused -= r.pauseUntil - now
	}
	return RateState{
		Rate:                    r.rate,
		MinRate:                 r.minRate,
		MaxRate:                 r.maxRate,
		RateBeforeLastDecrease:  r.beforeCut,
		SendRateAtLastDecrease:  r.sendAtCut,
		SinceLastDecrease:       now - r.lastCut,
		PausedSinceLastDecrease: max(paused, 0),
		SinceLastIncrease:       max(now-r.lastIncrease, 0),
		Waited:                  r.waited || r.qHead < len(r.q),
		InstanceCount:           r.n,
		MeasuredRate:            r.MeasuredRate(),
	}
}

// Rate is this process's rate, in units per minute.
func (r *Rate) Rate() float64 { return r.rate }

// WholeRate is the rate of the whole budget: Rate × Instances.
func (r *Rate) WholeRate() float64 { return r.rate * float64(r.n) }

// Instances is the number of processes sharing the budget.
func (r *Rate) Instances() int { return r.n }

// Tokens is what the bucket holds at now (below zero after a large
// request; 0 during a pause).
func (r *Rate) Tokens(now time.Duration) float64 { return r.tokensAt(now) }

// BucketSize is how many units the bucket holds when full.
func (r *Rate) BucketSize() float64 { return r.size }

// Len is the number of requests waiting.
func (r *Rate) Len() int { return len(r.q) - r.qHead }

// QueuedUnits is the units of the requests waiting.
func (r *Rate) QueuedUnits() int64 { return r.qUnits }

// Paused reports whether the limiter is in a Retry-After pause at now.
func (r *Rate) Paused(now time.Duration) bool { return now < r.pauseUntil }

// PausedUntil is when the last pause ends (0 if there never was one).
func (r *Rate) PausedUntil() time.Duration { return r.pauseUntil }

// MeasuredRate is the measured send rate, in units per minute.
func (r *Rate) MeasuredRate() float64 { return r.measured * 60 }

// Counts returns the running totals.
func (r *Rate) Counts() RateCounts { return r.counts }
