package quota

import (
	"math"
	"time"
)

// How fast a server gives units back, learned from its figures.
//
// A server that refills gradually (a token bucket, a sliding counter, a
// sliding log spent at a pace) gives units back between any two of its
// decisions: the later remaining is the earlier one, less what it accepted
// in between, plus what came back. So what came back between two attempts
// is
//
//	returned = R₂ − R₁ + accepted
//
// where accepted is the units the client sent after the first attempt up to
// the second, less those refused, and the interval is the time between the
// two sends: each reaches the server a forward leg later, and only the legs'
// jitter, tens of milliseconds, errs against a baseline of refillBaseline
// or more. Only answers to the latest attempt answered so far are taken, so
// that every attempt sent before it was counted before it. Estimates of
// successive baselines are averaged with weights that fade over refillFade.
//
// The rate is what this client may spend, whatever the server counts in:
// another client on the same quota spends some of what comes back, and a
// sliding log gives back what was spent a window ago. A baseline that ends
// with the server holding most of what it can hold (a bucket nearly full)
// was clipped there: it says only that the rate is at least its estimate,
// and one that kept up with the rate known says the rate is higher: it is
// then taken to be refillProbe times higher, until a baseline that is not
// clipped measures it. A throttle of an attempt the count had room for says
// the rate is lower than known: it is cut by refillCut.
type refillRate struct {
	units, span float64 // returned units and nanoseconds, with fading weights
	// The open baseline: the send time of its first attempt (0: none), the
	// remaining its answer showed, and the units sent up to it and refused
	// by then, as running totals.
	at, rem, sent, refused int64
}

// refillBaseline is the shortest interval the rate is measured over.
const refillBaseline = int64(time.Second)

// refillFade is how long a measurement keeps weight: after it, one e-th.
const refillFade = 30 * float64(time.Second)

const (
	// refillKeptUp is how close to the rate known a clipped baseline must
	// have spent to show that the rate is higher.
	refillKeptUp = 0.9
	// refillProbe is how much higher it is then taken to be.
	refillProbe = 1.25
	// refillCut is what a throttle of an attempt with room leaves of it.
	refillCut = 0.7
)

// observe takes the answer to the latest attempt: sent at sentAt, the
// sentUnits-th unit sent in all, with refused units refused so far, it
// showed rem remaining; full says the server then held most of what it can.
func (r *refillRate) observe(sentAt, sentUnits, refused, rem int64, full bool) {
	if r.at == 0 || sentAt < r.at {
		r.at, r.rem, r.sent, r.refused = sentAt, rem, sentUnits, refused
		return
	}
	dt := sentAt - r.at
	if dt < refillBaseline {
		return
	}
	returned := float64(rem - r.rem + (sentUnits - r.sent) - (refused - r.refused))
	r.at, r.rem, r.sent, r.refused = sentAt, rem, sentUnits, refused
	est := returned / float64(dt)
	if full {
		if known := r.perNs(); est >= refillKeptUp*known {
			r.units, r.span = refillProbe*max(est, known)*float64(dt), float64(dt)
		}
		return
	}
	f := math.Exp(-float64(dt) / refillFade)
	r.units = r.units*f + returned
	r.span = r.span*f + float64(dt)
}

// misfit cuts the rate after a throttle of an attempt the count had room
// for, and opens a new baseline at the next answer.
func (r *refillRate) misfit() {
	r.units *= refillCut
	r.at = 0
}

// perNs is the rate learned, units a nanosecond; 0 before the first
// baseline closes, or while more was spent than came back.
func (r *refillRate) perNs() float64 {
	if r.span == 0 || r.units <= 0 {
		return 0
	}
	return r.units / r.span
}

// restart forgets what was learned: the server's answers no longer fit it.
func (r *refillRate) restart() { *r = refillRate{} }
