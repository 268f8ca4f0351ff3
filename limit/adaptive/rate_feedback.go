package adaptive

import (
	"math"
	"time"
)

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
//     empty at the end, and no increase happens before it. A pause that
//     would end after math.MaxInt64 ends then: never, in practice.
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
		until := sat(now, min(retryAfter, r.cfg.MaxPause))
		if until > r.pauseUntil {
			r.refill(now)
			r.pausedAcc = sat(r.pausedAcc, since(until, max(now, r.pauseUntil)))
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
