package adaptive

import (
	"math"
	"time"
)

// measure counts a response of cost units at now into the measured send
// rate, as the AWS SDK does (aws-sdk-go-v2 aws/retry/adaptive_ratelimit.go,
// updateMeasuredRate): the units of a period are counted until a response
// lands in a later half-second period, which closes it; the rate of the
// closed periods is smoothed with 0.8. A success counts into the accepted
// rate too, measured the same way.
func (r *Rate) measure(now time.Duration, cost int, success bool) {
	r.counts.Responses += int64(cost)
	r.mUnits += float64(cost)
	if success {
		r.mAccepted += float64(cost)
	}
	if p := floorHalf(now); p > r.mPeriod {
		secs := (p - r.mPeriod).Seconds()
		r.measured = sendRateSmoothing*r.mUnits/secs + (1-sendRateSmoothing)*r.measured
		r.accepted = sendRateSmoothing*r.mAccepted/secs + (1-sendRateSmoothing)*r.accepted
		r.mUnits, r.mAccepted = 0, 0
		r.mPeriod = p
	}
}

// acceptedShare is how much of the accepted rate a cut keeps: the rate the
// dependency was seen to accept while it throttled is its limit, and a
// little below it the limiter stops meeting throttles.
const acceptedShare = 0.95

// onSuccess is Release of a Success at now, for a request of cost units
// sent at sentAt (the rules do not read sentAt today). It counts the units
// into the measured send rate, and, unless Disabled or paused, asks the
// controller for a new rate.
//
// While a published quota sets the rate (SetPublishedLimit), nothing
// raises it. Before the first cut a built-in controller is in slow start:
// the rate doubles, at most every half second and to at most twice the
// measured send rate, while requests wait, so that a limiter that starts
// far below its dependency's limit reaches it in seconds, not minutes; the
// first throttle ends it.
func (r *Rate) onSuccess(now, sentAt time.Duration, cost int) Change {
	r.measure(now, cost, true)
	r.acceptedSinceCut = true
	var ch Change
	if r.learning() {
		ch = r.windowSuccess(now, sentAt, cost)
	}
	if ch&ChangeRate != 0 {
		return ch // a reopening set the pace it learned
	}
	return ch | r.raise(now)
}

// raise is onSuccess's question to the controller at now.
func (r *Rate) raise(now time.Duration) Change {
	if r.disabled || r.published > 0 || now < r.pauseUntil || (r.builtin && !r.waited && !r.queueWaits(now)) {
		return 0
	}
	if r.builtin && r.slowStart {
		return r.double(now)
	}
	r.endHold(now)
	rate, ok := r.ctl.OnSuccess(r.state(now))
	if !ok {
		return 0
	}
	if rate != rate { // NaN: no change
		return 0
	}
	if rate, ok = r.underHold(now, rate); !ok {
		return 0
	}
	r.setRate(now, min(max(rate, r.minRate), r.maxRate))
	r.lastIncrease, r.waited = now, false
	r.counts.Increases++
	return ChangeRate
}

// double is a slow start's step on a success at now after a wait.
func (r *Rate) double(now time.Duration) Change {
	if now-r.lastIncrease < halfSecond {
		return 0
	}
	nr := min(2*r.rate, r.maxRate)
	if m := r.MeasuredRate(); m > 0 {
		nr = min(nr, sendRateCap*m)
	}
	if !(nr > r.rate) {
		return 0
	}
	r.setRate(now, nr)
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
	return r.disabled || r.published > 0 || (r.builtin && !r.waited && r.qHead == len(r.q) && !r.win.pending)
}

// onThrottled is Release of a throttle at now, for a request of cost units
// sent at sentAt, with the server's Retry-After (0 if none), in this order:
//
//  1. it restarts the increase clock and forgets that requests waited;
//  2. it cuts the rate on the first throttle, or when DecreaseCooldown has
//     passed since the last cut and the request was sent after it: the
//     controller proposes, the limiter never raises on a throttle and never
//     goes below the minimum;
//  3. with a Retry-After and MaxPause above 0, it pauses for
//     min(Retry-After, MaxPause): nothing is admitted, the bucket restarts
//     empty at the end, and no increase happens before it. A pause that
//     would end after math.MaxInt64 ends then: never, in practice.
//
// In Disabled mode it only counts the throttle and its units. While a
// published quota sets the rate (SetPublishedLimit) it does not cut:
// published figures win over what throttles teach, and the quota guard
// reads the throttle's figures; the pause still holds.
//
// A built-in controller cuts again only after the dependency has accepted
// something since the last cut: throttles with no success between say the
// dependency refuses at any rate (a window spent), which a lower rate does
// not cure, and cutting on each would leave the rate a fraction of the
// limit when the window comes back.
//
// A built-in controller's first throttle before anything was measured (the
// first half second) answers the bucket's first burst, not the rate: it
// empties the bucket, pauses on a Retry-After, and cuts nothing.
//
// A built-in controller's cut also reads the accepted rate, the units the
// dependency was accepting while it began to throttle, which is its limit
// as seen from here: the cut goes to acceptedShare of it when that is
// between the controller's proposal and the current rate, so that a rate
// just over the limit is not cut by a third; in slow start, whose rate may
// be twice the limit, it goes there even below the proposal, but not below
// half the rate. Out of slow start, with no Retry-After and no window
// learned, a throttle while the dependency refuses more than half of what
// is sent (a deep bucket drained by the climb that its burst hid) goes
// there too: a cut by the controller's factor alone would leave the rate
// over the limit for several more cuts. CUBIC's curve then aims at the
// accepted rate (SendRateAtLastDecrease), not at the rate that was
// throttled.
//
// With Cubic, a throttle with a Retry-After cuts less and holds the rate
// after its pause, so that the next probe, which costs a pause too, comes
// later (rate_retryafter.go).
func (r *Rate) onThrottled(now, sentAt time.Duration, cost int, retryAfter time.Duration) Change {
	r.measure(now, cost, false)
	r.counts.Throttles++
	if r.disabled {
		return 0
	}
	var ch Change
	if r.learning() {
		ch = r.windowThrottle(now, sentAt, retryAfter)
	}
	r.lastIncrease, r.waited = max(now, r.pauseUntil), false
	if r.builtin && r.slowStart && r.measured == 0 {
		// Nothing measured yet: the throttle answers the first bucket's
		// burst, not the rate, which the dependency has not yet seen for a
		// second. The limiter empties its bucket and paces from here.
		r.refill(now)
		r.tokens = min(r.tokens, 0)
		return ch | r.pause(now, retryAfter)
	}
	holds := r.holdsProbes() && retryAfter > 0
	paused, small := false, false
	if r.published == 0 && (!r.cutOnce || (now-r.lastCut >= r.cfg.DecreaseCooldown && sentAt > r.lastCut && (!r.builtin || r.acceptedSinceCut))) {
		p := r.ctl.OnThrottled(r.state(now))
		nr := r.rate
		if p < nr { // NaN keeps the rate
			nr = p
		}
		sendAt := r.MeasuredRate()
		if a := r.acceptedRate(); a > 0 && r.builtin {
			e := acceptedShare * a
			switch {
			case r.slowStart:
				nr = min(r.rate, max(e, r.rate/2))
			case retryAfter == 0 && sendAt > 2*a && r.win.period == 0:
				nr = min(nr, max(e, r.rate/2))
			case holds:
				paused, small = true, r.smallOvershoot(a)
				nr = max(nr, pausedShare*r.pausedLevel(a))
			default:
				nr = max(nr, min(e, r.rate))
			}
			sendAt = min(sendAt, a)
		}
		nr = max(nr, r.minRate)
		r.slowStart, r.acceptedSinceCut = false, false
		r.beforeCut, r.sendAtCut = r.rate, sendAt
		r.cutOnce, r.lastCut = true, now
		r.pausedAcc = max(r.pauseUntil-now, 0) // the rest of a pause in progress
		r.setRate(now, nr)
		r.counts.Cuts++
		ch |= ChangeCut | ChangeRate
	}
	p := r.pause(now, retryAfter)
	if holds && p != 0 {
		r.holdProbes(now, retryAfter, paused, small)
	}
	return ch | p
}

// pause starts or lengthens the pause of a throttle with a Retry-After at
// now (onThrottled's step 3).
func (r *Rate) pause(now, retryAfter time.Duration) Change {
	if retryAfter <= 0 || r.cfg.MaxPause <= 0 {
		return 0
	}
	until := sat(now, min(retryAfter, r.cfg.MaxPause))
	if until <= r.pauseUntil {
		return 0
	}
	r.refill(now)
	r.pausedAcc = sat(r.pausedAcc, since(until, max(now, r.pauseUntil)))
	r.pauseUntil = until
	r.tokens = min(r.tokens, 0)
	r.lastFill = until
	r.lastIncrease = until
	r.counts.Pauses++
	return ChangePause
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
	if r.published > 0 {
		r.setRate(now, r.maxRate)
		return ChangeRate
	}
	r.setRate(now, min(max(whole/float64(n), r.minRate), r.maxRate))
	return ChangeRate
}

// SetPublishedLimit gives the limiter at now the quota the API publishes,
// in units per minute for the whole budget (all instances together), and
// its window; 0 takes it away. Anything that is not a finite number above
// 0 (a negative, NaN, +Inf) takes it away too.
//
// Published figures win over learning. With a quota P the limiter works as
// if MaxUnitsPerMinute were
//
//	M = min(MaxUnitsPerMinute, PublishedLimitFraction × P)
//
// and MinUnitsPerMinute min(MinUnitsPerMinute, M), and it follows the
// quota: its rate is this process's share of M (M ÷ Instances) at once,
// whatever it had learned, throttles do not cut it and successes do not
// raise it, and its bucket holds a whole window of that rate (or Burst of
// it, if longer), so that a fixed window's remaining can be spent at the
// window's start; the quota guard beside it holds what the remaining
// allowance has no room for. The first quota a limiter alone on its budget
// (one instance) is ever given fills the bucket: the guard then knows the
// remaining allowance and holds what it has no room for. Later ones do not
// (a quota comes back after a silence in which the guard admitted freely),
// nor do those of instances that share a budget, where every guard sees
// the same remaining and only the shares keep the whole within it. A window of 0 leaves the
// bucket at Burst, and so does taking the quota away, which keeps at most
// Burst of tokens.
//
// Taking the quota away keeps the rate, clamped into the configured
// [minimum, maximum]: the limiter learns on from the published share. The
// rate before the last cut and the send rate at the last cut are kept. It
// reports ChangeRate when the quota or its window changed, 0 otherwise.
func (r *Rate) SetPublishedLimit(now time.Duration, unitsPerMinute float64, window time.Duration) Change {
	p := unitsPerMinute
	if !(p > 0) || math.IsInf(p, 1) {
		p, window = 0, 0
	}
	window = max(window, 0)
	if p == r.published && window == r.pubWindow {
		return 0
	}
	first := p > 0 && !r.followed
	r.followed = r.followed || p > 0
	r.published, r.pubWindow = p, window
	r.share()
	if p == 0 {
		r.setRate(now, min(max(r.rate, r.minRate), r.maxRate))
		return ChangeRate
	}
	r.slowStart = false
	r.setRate(now, r.maxRate)
	if first && r.n == 1 && now >= r.pauseUntil {
		r.tokens = r.size
	}
	return ChangeRate
}
