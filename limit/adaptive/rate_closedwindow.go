package adaptive

import (
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/backoffcurve"
)

// Windows without figures. A server that counts a fixed or sliding window
// and publishes nothing (express-rate-limit with its headers off, a
// sliding log behind a proxy that strips them) refuses in runs: once the
// window's allowance is spent it refuses every attempt, at any pace, until
// the window reopens. A lower rate does not end such a run; only time
// does. The Rate learns it as TCP learns a path, from what the server does:
//
//   - A run of throttles with no success between them, for attempts sent
//     closeGrace or more after the first of them, says the window is spent
//     (sooner once the allowance learned below has been spent). The Rate
//     then stops and probes: one attempt at a time, on an exponential curve
//     (github.com/cenkalti/backoff/v4) or, once the window's period is
//     known, at the instant it should reopen and on a curve scaled to the
//     period after that.
//   - A throttle with a Retry-After needs no probe: the server names the
//     reopening, and the pause (onThrottled) waits for it.
//   - The first success after either is a reopening. The spacing of two
//     reopenings (the first opening is the first attempt) is the window's
//     period as seen from here, and the units accepted between them its
//     allowance: the Rate then paces at windowShare of allowance ÷ period
//     from an empty bucket, so that the next window's allowance is spread
//     over it instead of spent in a burst, and CUBIC's curve aims at that
//     rate.

const (
	// closeGrace is the longest time after the first throttle of a run a
	// throttle must have been sent for the run to say that the window is
	// spent (runGrace): a rate just over a bucket's is answered with
	// throttles between successes, and a cut needs a round trip to reach
	// the server.
	closeGrace = time.Second
	// windowShare is the share of the learned allowance rate paced after
	// a reopening, as PublishedLimitFraction is of a published one.
	windowShare = 0.98
	// minPacedPeriod is the shortest period whose allowance rate is paced
	// after a reopening. A window of a second or so reopens before a run
	// can say much: its reopenings are spaced by the probes' steps as much
	// as by the window, and the throttles' cuts find its rate as well.
	minPacedPeriod = 2 * time.Second
	// spentAfter is how many units the rate accepted before a run would
	// have brought back, had the server only slowed down, before the run
	// says the window is spent.
	spentAfter = 3
	// spentShare is the share of the learned allowance whose use makes the
	// first throttle of a run say the window is spent.
	spentShare = 0.9
	// minProbeHold is the least time a probe is waited for before another
	// goes in its place (an answer lost, a dependency that hangs).
	minProbeHold = time.Second
	// probeJitter spreads the probes of clients that were refused together
	// (the guard's backoff without hints takes the same).
	probeJitter = 0.2
)

// unknownPeriod is the probes' curve while the window's period is unknown,
// from a tenth of the time the window has been open and closed (set when
// it closes): ×1.1, at most 30 s, so that its reopening is found within a
// tenth or so of its length.
var unknownPeriod = headroom.Backoff{
	Multiplier: 1.1,
	Jitter:     new(0.0),
	Max:        headroom.Duration(30 * time.Second),
}

// windows is what a Rate learns of a server that refuses in runs.
type windows struct {
	started bool
	// opened is when the current opening began (the send time of its
	// first accepted attempt: the first attempt, then each reopening), and
	// units the units accepted of the attempts sent since.
	opened time.Duration
	units  float64
	// period is the learned spacing of reopenings, and capacity the units
	// a minute accepted over it; 0 until a reopening was seen.
	period   time.Duration
	capacity float64

	// inRun says throttles have come since the last success; runFrom is
	// when the first of them was sent, runCount how many came.
	inRun    bool
	runFrom  time.Duration
	runCount int
	grace    time.Duration // how long the run must last to say the window is spent
	runRA    time.Duration // the longest Retry-After of the run
	raEnd    time.Duration // when the latest Retry-After ends
	// closed says the window is spent: one probe at a time. pending says
	// the next success sent after runFrom is a reopening (a closed run, or
	// a Retry-After's pause).
	closed, pending bool
	// pendingAt is when pending was set: only an attempt sent after it
	// can reopen (answers overtake each other on the way).
	pendingAt  time.Duration
	probeOut   bool
	probeSent  time.Duration
	probeUntil time.Duration // when a probe out is given up for lost
	// refusedProbe is when the last probe refused went out.
	refusedProbe time.Duration
	probes       int // probes sent in this closed run
	// trusted says the run fits the window learned: its probes follow
	// the period. A run that comes before the allowance is spent (a
	// bucket, a quota that fell) probes as if nothing were known.
	trusted bool

	rtt time.Duration // smoothed round trip of the answers
	bo  backoff.ExponentialBackOff
	rng *rand.Rand
}

// learning says the Rate learns windows: no published quota sets its rate,
// and it is not Disabled.
func (r *Rate) learning() bool { return r.published == 0 && !r.disabled }

// admitted notes at now that a request was admitted: the first opens the
// first window, and a closed window's probe holds everything else until
// its answer.
func (r *Rate) admitted(now time.Duration) {
	w := &r.win
	if !w.started {
		w.started, w.opened = true, now
	}
	if w.closed && (!w.probeOut || now >= w.probeUntil) {
		// A probe: everything else waits for its answer, or until it is
		// given up for lost.
		w.probeOut, w.probeSent = true, now
		w.probeUntil = max(sat(now, max(4*w.rtt, minProbeHold)), w.raEnd)
		r.hold(now, w.probeUntil)
	}
}

// observeRTT smooths the round trip d into the windows' estimate (TCP's
// SRTT gain of 1/8, RFC 6298).
func (w *windows) observeRTT(d time.Duration) {
	if d <= 0 {
		return
	}
	if w.rtt == 0 {
		w.rtt = d
		return
	}
	w.rtt += (d - w.rtt) / 8
}

// windowSuccess is onSuccess's part for windows: it counts the units, and a
// success that reopens a window teaches its period and allowance and sets
// the pace.
func (r *Rate) windowSuccess(now, sentAt time.Duration, cost int) Change {
	w := &r.win
	w.observeRTT(now - sentAt)
	if w.inRun && sentAt < w.runFrom {
		// An answer sent before the run began: it ends nothing.
		if sentAt >= w.opened {
			w.units += float64(cost)
		}
		return 0
	}
	run := w.runCount
	w.inRun, w.runCount = false, 0
	if !w.pending || sentAt < w.pendingAt {
		if sentAt >= w.opened {
			w.units += float64(cost)
		}
		return 0
	}
	// A reopening teaches the window when probes found it, or when the
	// server named it with a Retry-After of minPacedPeriod or more for a
	// run of throttles: a bucket's is a unit's refill, rounded up to a
	// second, which says nothing of a window, and a lone throttle is no
	// run.
	onTime, probed := w.closed && w.probes == 1, w.closed || w.runRA >= minPacedPeriod && run >= 2
	at := sentAt
	if probed && w.refusedProbe > w.opened {
		// It reopened between the last probe refused and this one: the
		// middle is the best guess.
		at = w.refusedProbe + (sentAt-w.refusedProbe)/2
	} else if !w.closed && w.runRA%time.Second == 0 {
		// A Retry-After in whole seconds is rounded up (RFC 9110
		// delay-seconds): the window reopened up to a second before it
		// ended, half a second on average.
		at -= min(time.Second/2, at-w.opened)
	}
	w.pending, w.closed, w.probeOut = false, false, false
	learned := false
	if p := at - w.opened; probed && p > 0 && w.units > 0 {
		m := w.units / p.Minutes()
		switch {
		case w.period == 0:
			w.period, w.capacity, learned = p, m, true
		case p >= w.period*3/2:
			// Several windows since the last reopening, of which only the
			// last was spent: the units undercount its allowance. They
			// may raise what was learned, and the pace with it, but the
			// cut of the run's first throttle may have found more.
			w.capacity = max(w.capacity, m)
			learned = windowShare*w.capacity > r.rate
		case onTime:
			// A reopening found by the first probe, sent at the period
			// learned, says the period is at most that.
			w.period, w.capacity, learned = min(w.period, p), m, true
		default:
			w.period, w.capacity, learned = p, m, true
		}
	}
	w.opened, w.units = sentAt, float64(cost)
	ch := r.resume(now)
	if learned && w.period >= minPacedPeriod {
		r.setRate(now, min(max(windowShare*w.capacity, r.minRate), r.maxRate))
		r.beforeCut, r.sendAtCut = w.capacity, w.capacity
		r.lastCut, r.lastIncrease, r.pausedAcc = now, now, 0
		r.slowStart, r.cutOnce, r.acceptedSinceCut = false, true, true
		ch |= ChangeRate
	}
	return ch
}

// windowThrottle is onThrottled's part for windows, for a throttle at now
// of an attempt sent at sentAt with the server's Retry-After: it notes the
// run, and says when a run shows the window spent.
func (r *Rate) windowThrottle(now, sentAt, retryAfter time.Duration) Change {
	w := &r.win
	w.observeRTT(now - sentAt)
	if !w.inRun {
		w.inRun, w.runFrom, w.runCount, w.runRA = true, sentAt, 0, 0
		w.grace = r.runGrace()
	}
	w.runRA = max(w.runRA, retryAfter)
	w.runCount++
	if retryAfter > 0 && r.cfg.MaxPause > 0 {
		// The server names the reopening: the pause waits for it.
		if !w.pending {
			w.pending, w.pendingAt = true, now
		}
		w.raEnd = max(w.raEnd, sat(now, retryAfter))
		w.closed, w.probeOut = false, false
		if retryAfter > r.cfg.MaxPause {
			// The pause ends before the server said it would: after it,
			// one probe, waited for until the server's end, and not the
			// rate's worth of attempts, which the quota guard would hold
			// and then let go at once.
			r.closeWindow(now)
		}
		return 0
	}
	if w.closed {
		if !w.probeOut || sentAt < w.probeSent {
			return 0 // an attempt sent before the probe
		}
		w.probeOut, w.refusedProbe = false, w.probeSent
		return r.hold(now, sat(now, r.nextProbe(now)))
	}
	spent := w.spent()
	if !spent && (w.runCount < 2 || sentAt-w.runFrom < w.grace) {
		return 0
	}
	if !w.pending {
		w.pending, w.pendingAt = true, now
	}
	r.closeWindow(now)
	return r.hold(now, sat(now, r.nextProbe(now)))
}

// spent says the units accepted since the window opened are the allowance
// learned, or nearly: a run now fits the window learned.
func (w *windows) spent() bool {
	return w.capacity > 0 && w.units >= spentShare*w.capacity*w.period.Minutes()
}

// closeWindow says at now that the window is spent: from the end of the
// hold or pause on, one probe at a time, on a new curve.
func (r *Rate) closeWindow(now time.Duration) {
	w := &r.win
	w.closed, w.probeOut, w.probes = true, false, 0
	curve := unknownPeriod
	// A window still closed now has lasted since it opened: probe at a
	// tenth of that, growing slowly, so that the reopening is found
	// within a tenth of the window.
	curve.Initial = headroom.Duration(min(max((now-w.opened)/10, 10*time.Millisecond), time.Second))
	w.trusted = w.spent()
	if w.trusted {
		curve.Initial = headroom.Duration(max(w.period/32, time.Millisecond))
		curve.Max = headroom.Duration(max(w.period/4, time.Millisecond))
	}
	backoffcurve.Reset(&w.bo, curve)
	if w.rng == nil {
		w.rng = rand.New(rand.NewPCG(r.cfg.Seed, 0x77696e646f7773))
	}
}

// runGrace is how long a run of throttles that begins now must last to
// say the window is spent: long enough for successes to have come at the
// rate accepted before it (spentAfter of them), for a bucket refilling at
// that rate answers with some, and for a cut to have reached the server
// (two round trips); at most closeGrace.
func (r *Rate) runGrace() time.Duration {
	g := 2 * r.win.rtt
	if a := r.acceptedRate(); a > 0 {
		g = max(g, time.Duration(spentAfter*float64(time.Minute)/a))
	}
	return min(g, closeGrace)
}

// nextProbe is the wait from now until the next probe of a closed window:
// the period learned after the window opened, with a round trip to spare,
// for the first, but no more than a quarter of the period (a sliding log
// gives room back as its oldest units leave, before the period is out);
// then the curve's next step, with jitter.
func (r *Rate) nextProbe(now time.Duration) time.Duration {
	w := &r.win
	w.probes++
	if w.probes == 1 && w.trusted {
		if at := w.opened + w.period + w.rtt; at > now {
			return min(at-now, w.period/4)
		}
	}
	d := w.bo.NextBackOff()
	return time.Duration(float64(d) * (1 - probeJitter + 2*probeJitter*w.rng.Float64()))
}

// hold pauses the Rate from now until until: nothing is admitted before
// it, and the bucket restarts empty then.
func (r *Rate) hold(now, until time.Duration) Change {
	r.refill(now)
	if until > r.pauseUntil {
		r.pausedAcc = sat(r.pausedAcc, since(until, max(now, r.pauseUntil)))
	}
	r.pauseUntil = until
	r.tokens = min(r.tokens, 0)
	r.lastFill = until
	return ChangePause
}

// resume ends a hold or pause at now: the bucket fills from empty.
func (r *Rate) resume(now time.Duration) Change {
	if r.pauseUntil <= now {
		return 0
	}
	r.pausedAcc = max(r.pausedAcc-(r.pauseUntil-now), 0)
	r.pauseUntil, r.lastFill = now, now
	r.tokens = min(r.tokens, 0)
	return ChangePause
}
