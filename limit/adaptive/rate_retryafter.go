package adaptive

import "time"

// Throttles that name a pause. A throttle with a Retry-After is honoured to
// its end (RFC 9110 §10.2.3): nothing is admitted before. It costs more
// than a cut: the pause is in whole seconds rounded up, so against a window
// of a second or a few it idles the client for the rest of the window and
// often for much of the next, however small the overshoot was. CUBIC's
// curve probes above the rate that met its last throttle once its period
// has passed, and against such a server each probe costs a pause. So,
// while the Rate learns (no published quota) and its controller is Cubic,
// a throttle with a Retry-After that cuts:
//
//   - after a small overshoot (the dependency accepted trustShare of the
//     rate or more) cuts to pausedShare of the rate: the pause has emptied
//     what the overshoot filled, and a deeper cut loses more than the pause
//     did. It then holds the rate until probeHoldPerPause times the pause
//     after the pause's end (at most maxProbeHold after it): nothing raises
//     it, and from the first raise it held back the curve's clock stands
//     still, so that the curve takes up where it was and its next probe
//     comes that much later. A quota that came back is found that much
//     later, not given up;
//   - after a larger overshoot (the limit fell, or the first climb
//     overshot) cuts to pausedShare of the accepted rate, and ends a hold:
//     the level is not known yet.
//
// A throttle with a Retry-After that does not cut so (in the cooldown, or
// as the slow start's first) says the rate held now met a pause too: it
// holds that rate, or lengthens the hold in progress.
//
// AIMD is left as it was: its steps are its only probes, and holding them
// slows its climb back once a quota that fell comes back.

const (
	// trustShare is the least share of the rate the accepted rate must be
	// for a throttle to be a small overshoot: the accepted rate is
	// measured over half-second periods that the throttle and its pause
	// split, and runs a few percent under the rate it accepted.
	trustShare = 0.97
	// pausedShare is the share of the level met that a throttle with a
	// Retry-After cuts to.
	pausedShare = 0.98
	// probeHoldPerPause is the hold after a Retry-After's pause, per unit
	// of the pause: a pause of a second then comes at most once in 20 s
	// of hold plus the curve's climb back above the level.
	probeHoldPerPause = 20
	// maxProbeHold bounds the hold after a pause.
	maxProbeHold = time.Minute
)

// probeHoldState is a hold after a Retry-After's pause: until end no raise
// goes above ceiling, the rate when it began. end is 0 when there is none.
type probeHoldState struct {
	end     time.Duration
	ceiling float64
	// capped is when a raise was first held (0: none yet): the curve's
	// clock stands still from then until end.
	capped time.Duration
}

// holdsProbes says whether throttles with a Retry-After hold the rate: the
// Rate learns, pauses on them, and its controller is Cubic.
func (r *Rate) holdsProbes() bool {
	_, cubic := r.ctl.(Cubic)
	return cubic && r.learning() && r.cfg.MaxPause > 0
}

// smallOvershoot says whether an accepted rate of a units a minute at a
// throttle is the rate's own: the dependency accepted nearly all of it.
func (r *Rate) smallOvershoot(a float64) bool { return a >= trustShare*r.rate }

// pausedLevel is the rate a throttle with a Retry-After met, for an
// accepted rate of a units a minute: the rate after a small overshoot, the
// accepted rate after a larger one.
func (r *Rate) pausedLevel(a float64) float64 {
	if r.smallOvershoot(a) {
		return r.rate
	}
	return a
}

// holdProbes starts, lengthens or ends the hold after a throttle at now
// with a Retry-After of retryAfter, whose pause ends at r.pauseUntil; cut
// says the throttle cut the rate to its level, small that it found a small
// overshoot.
func (r *Rate) holdProbes(now, retryAfter time.Duration, cut, small bool) {
	h := &r.probeHold
	if cut && !small {
		*h = probeHoldState{}
		return
	}
	if cut || now >= h.end {
		h.ceiling, h.capped = r.rate, now
	}
	hold := time.Duration(probeHoldPerPause) * min(retryAfter, r.cfg.MaxPause)
	h.end = max(h.end, sat(r.pauseUntil, min(hold, maxProbeHold)))
}

// underHold keeps a raise at now to rate under the hold's ceiling: the
// rate to take, and false when there is none to take.
func (r *Rate) underHold(now time.Duration, rate float64) (float64, bool) {
	h := &r.probeHold
	if h.end == 0 || now >= h.end || rate <= h.ceiling {
		return rate, true
	}
	if h.capped == 0 {
		h.capped = now
	}
	if h.ceiling <= r.rate {
		return 0, false
	}
	return h.ceiling, true
}

// endHold ends a hold that is over at now: the time the rate was held at
// its ceiling since the last cut counts as paused for the controller's
// curve (the pause in it too, which the pause counted already: the curve
// takes up a pause behind).
func (r *Rate) endHold(now time.Duration) {
	h := &r.probeHold
	if h.end == 0 || now < h.end {
		return
	}
	if h.capped > 0 && h.capped >= r.lastCut {
		r.pausedAcc = sat(r.pausedAcc, h.end-h.capped)
	}
	*h = probeHoldState{}
}
