package adaptive

import (
	"math"
	"time"

	"github.com/headroom-go/headroom/internal/fairshare"
)

// halfSecond is the width of the periods of the measured send rate
// (aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go: floor(t×2)/2).
const halfSecond = 500 * time.Millisecond

// epsilon absorbs float rounding when tokens are compared with a cost.
const epsilon = 1e-9

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
	// MaxWait without getting them.
	Granted bool
}

// RateCounts are running totals, for tests, the simulator and dashboards.
type RateCounts struct {
	Units     int64 // units admitted (in Disabled mode too)
	Responses int64 // units of responses (successes and throttles)
	Throttles int64
	Cuts      int64
	Pauses    int64
	Increases int64 // rises of the rate on a success
	TimedOut  int64 // waiters that left the queue at MaxWait without their units
}

type waiter struct {
	id       uint64
	cost     int
	enqueued time.Duration
	level    int // fairshare's: 0 background, 1 default, 2 critical
	tag      fairshare.Tag
}

// Rate is the deterministic core of the throttle-driven adaptive rate
// limiter: a token bucket in units with a FIFO queue of
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
	cfg      settings
	ctl      RateController
	n        int
	disabled bool
	// builtin is true for AIMD and Cubic, which never change the rate on a
	// success unless requests waited: Release skips them otherwise.
	builtin bool

	// this process's share, units per minute
	rate, minRate, maxRate, initRate float64

	published float64       // the published quota, whole budget, units per minute; 0: none
	pubWindow time.Duration // its window: while following it, the bucket holds one
	followed  bool          // a quota has been given before
	pubFrac   float64       // PublishedLimitFraction, default applied

	// slowStart is true until the first cut: a built-in controller's rate
	// doubles every half second while requests wait (see onSuccess).
	slowStart bool

	perNs    float64 // rate in units per nanosecond
	size     float64 // bucket size, units (≥ 1)
	burstMin float64 // Burst in minutes
	tokens   float64
	lastFill time.Duration // tokens are exact at lastFill; in the future during a pause

	created time.Duration
	cutOnce bool
	// acceptedSinceCut says a success was reported since the last cut.
	acceptedSinceCut bool
	lastCut          time.Duration
	beforeCut        float64 // RateBeforeLastDecrease
	sendAtCut        float64 // SendRateAtLastDecrease
	pausedAcc        time.Duration
	lastIncrease     time.Duration
	waited           bool
	pauseUntil       time.Duration
	// probeHold is the hold after a Retry-After's pause (rate_retryafter.go).
	probeHold probeHoldState

	mPeriod   time.Duration // start of the current half-second period
	mUnits    float64
	mAccepted float64
	measured  float64 // units per second, of every response
	accepted  float64 // units per second, of the successes only

	q      []waiter // in order of priority (rate_priority.go)
	qHead  int
	qUnits int64
	nextID uint64
	order  fairshare.Order

	counts RateCounts

	// bg holds background work out of a reserve of the rate
	// (rate_reserve.go).
	bg backgroundReserve

	// win is what the Rate learns of a server that refuses in runs
	// (rate_closedwindow.go).
	win windows
}

// NewRate returns a Rate configured by rc, created at now with a full
// bucket, or Validate's error.
func NewRate(rc RateConfig, now time.Duration) (*Rate, error) {
	if err := rc.Validate(); err != nil {
		return nil, err
	}
	c := rc.settings()
	r := &Rate{cfg: c, ctl: c.Controller, n: max(c.Instances, 1), disabled: c.Disabled, pubFrac: c.PublishedLimitFraction}
	if r.pubFrac == 0 {
		r.pubFrac = defaultPublishedLimitFraction
	}
	if r.ctl == nil {
		r.ctl = AIMD{}
	}
	switch r.ctl.(type) {
	case AIMD, Cubic:
		r.builtin = true
	}
	r.burstMin = c.Burst.Minutes()
	r.slowStart = true
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
	r.followCap()
}

// wholeMax is the whole budget's maximum: MaxUnitsPerMinute, or the
// published cap when lower.
func (r *Rate) wholeMax() float64 {
	if r.published > 0 {
		return min(r.cfg.MaxUnitsPerMinute, r.pubFrac*r.published)
	}
	return r.cfg.MaxUnitsPerMinute
}

// resize sets the bucket for the current rate: Burst of it, or while a
// published quota is followed the published window of it, so that a fixed
// window's whole remaining can be spent at its start.
func (r *Rate) resize() {
	r.perNs = r.rate / float64(time.Minute)
	burst := r.burstMin
	if r.published > 0 {
		burst = max(burst, r.pubWindow.Minutes())
	}
	r.size = max(r.rate*burst, 1)
	r.tokens = min(r.tokens, r.size)
}

// sat is t+d for d ≥ 0, saturated at math.MaxInt64: MaxWait, MaxPause and
// a Retry-After may each be as long as "for ever".
func sat(t, d time.Duration) time.Duration {
	if s := t + d; s >= t {
		return s
	}
	return math.MaxInt64
}

// since is t−from for t ≥ from, saturated at math.MaxInt64 (times may have
// any origin, so even a difference that is never negative can wrap).
func since(t, from time.Duration) time.Duration {
	if d := t - from; d >= 0 {
		return d
	}
	return math.MaxInt64
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

// TryAcquire admits a request of cost units at now if it can go at once:
// cost 0 (which never waits and changes nothing), Disabled mode, or nobody
// queued, no pause, and the bucket holding the cost (a full bucket for a
// request larger than the bucket). It takes the cost from the bucket, which
// a large request drives below zero. On refusal it takes nothing, marks that
// requests waited (a refused request is demand the rate did not meet: the
// built-in controllers rise on it), and retryAfter is the wait Enqueue would
// expect at the current rate: until the bucket has gathered the units of
// the requests queued and this one's (after a pause). Queue the request
// with Enqueue, or refuse it. cost must not be negative.
func (r *Rate) TryAcquire(now time.Duration, cost int) (ok bool, retryAfter time.Duration) {
	if cost <= 0 {
		return true, 0
	}
	if r.disabled {
		r.counts.Units += int64(cost)
		return true, 0
	}
	if r.qHead < len(r.q) {
		r.waited = true
		return false, r.waitFor(now, r.qUnits, cost)
	}
	r.refill(now)
	if r.tokens+epsilon < r.need(cost) {
		r.waited = true
		return false, r.waitFor(now, 0, cost)
	}
	r.takeAt(now, cost)
	return true, 0
}

// takeAt takes cost units from the bucket, refilled to now, for a request
// that goes at now.
func (r *Rate) takeAt(now time.Duration, cost int) {
	r.refill(now)
	r.tokens -= float64(cost)
	r.counts.Units += int64(cost)
	r.admitted(now)
}

// ---- feedback ----

// PublishedLimit is the published quota SetPublishedLimit last set, whole
// budget, units per minute (0: none).
func (r *Rate) PublishedLimit() float64 { return r.published }

// MaxRate is this process's maximum rate, units per minute:
// min(MaxUnitsPerMinute, PublishedLimitFraction × PublishedLimit) ÷
// Instances.
func (r *Rate) MaxRate() float64 { return r.maxRate }

// ---- readers ----

// state is the RateState a controller would see at now.
func (r *Rate) state(now time.Duration) RateState {
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
		Waited:                  r.waited || r.queueWaits(now),
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

// BucketSize is the units the bucket holds when full: Tokens against it is
// the limiter's saturation.
func (r *Rate) BucketSize() float64 { return r.size }

// Len is the number of requests waiting.
func (r *Rate) Len() int { return len(r.q) - r.qHead }

// QueuedUnits is the units the waiters hold between them.
func (r *Rate) QueuedUnits() int64 { return r.qUnits }

// PausedUntil is when the last pause ends (0 if there never was one).
func (r *Rate) PausedUntil() time.Duration { return r.pauseUntil }

// MeasuredRate is the measured send rate, in units per minute.
func (r *Rate) MeasuredRate() float64 { return r.measured * 60 }

// acceptedRate is the measured rate of the units the dependency accepted
// (successes only), in units per minute; 0 until a half-second period with
// a response has ended.
func (r *Rate) acceptedRate() float64 { return r.accepted * 60 }

// Counts returns the running totals.
func (r *Rate) Counts() RateCounts { return r.counts }
