package adaptive

import "time"

// A RateController decides the next rate of a Rate limiter. It is pure: it
// reads the RateState it is given and returns a rate; the limiter does the
// rest (the lock, the clock, the minimum and maximum, the instance share, the
// cooldown, the pause, and the rule that a request sent before the last cut
// does not cut again).
//
// All rates in the state and in the results are this process's share, in
// units per minute. A controller must be safe to call from one goroutine at a
// time; the built-in ones are plain values and safe for any use.
type RateController interface {
	// OnThrottled returns the rate after a cut. The limiter calls it only
	// when it cuts: on the first throttle, and later only after the
	// cooldown and for a request sent after the last cut. The limiter uses
	// the lower of the result and the current rate, and keeps it at
	// MinRate or above.
	OnThrottled(s RateState) float64
	// OnSuccess returns a new rate and true, or false for no change. A
	// returned rate, even the current one, restarts the increase clock
	// and clears Waited. The limiter never calls it during a pause, and
	// keeps the result between MinRate and MaxRate.
	OnSuccess(s RateState) (rate float64, ok bool)
}

// RateState is what a RateController sees. Rates are this process's share,
// in units per minute.
type RateState struct {
	// Rate is the current rate.
	Rate float64
	// MinRate and MaxRate are this process's share of the minimum and
	// maximum of the whole budget; with a published quota
	// (Rate.SetPublishedLimit) the maximum is the lower of the configured
	// one and PublishedLimitFraction × the quota, and the minimum at most
	// that. The limiter enforces both on whatever the controller returns.
	MinRate, MaxRate float64
	// RateBeforeLastDecrease is the rate before the last cut; before the
	// first cut, the initial rate.
	RateBeforeLastDecrease float64
	// SendRateAtLastDecrease is MeasuredRate when the last cut happened; 0
	// before the first cut, or when nothing had been measured yet. CUBIC
	// takes W = min(RateBeforeLastDecrease, SendRateAtLastDecrease) from
	// it (headroom's addition to the controller's state, so that CUBIC stays
	// pure).
	SendRateAtLastDecrease float64
	// SinceLastDecrease is the time since the last cut; before the first
	// cut, the time since the limiter was created.
	SinceLastDecrease time.Duration
	// PausedSinceLastDecrease is how much of SinceLastDecrease was spent
	// in Retry-After pauses (headroom's addition: CUBIC's t leaves the
	// pause out).
	PausedSinceLastDecrease time.Duration
	// SinceLastIncrease is the time since the last rate OnSuccess
	// returned, or since the last throttle; after a pause, it counts from
	// the end of the pause.
	SinceLastIncrease time.Duration
	// Waited is true if a request had to wait for units (or is waiting
	// now) since the last change.
	Waited bool
	// InstanceCount is the number of processes that share the budget;
	// divide whole-budget steps by it.
	InstanceCount int
	// MeasuredRate is the measured send rate: response units per
	// half-second period, smoothed with 0.8 (as the AWS SDK does), here in
	// units per minute. 0 until the first period has ended.
	MeasuredRate float64
}
