package adaptive

import (
	"testing"
	"time"
)

// raSlidingLog is a sliding log that publishes only a Retry-After on a
// throttle: at most allowance units in any window, and the wait until the
// oldest leaves it in whole seconds rounded up, at least one (RFC 9110
// delay-seconds).
type raSlidingLog struct {
	window    time.Duration
	allowance int
	log       []time.Duration
}

func (s *raSlidingLog) decide(at time.Duration) (bool, time.Duration) {
	for len(s.log) > 0 && s.log[0] <= at-s.window {
		s.log = s.log[1:]
	}
	if len(s.log) < s.allowance {
		s.log = append(s.log, at)
		return true, 0
	}
	wait := s.log[0] + s.window - at
	secs := max((wait+time.Second-1)/time.Second, 1)
	return false, secs * time.Second
}

// Against a one-second sliding log that answers with a Retry-After alone,
// each probe above its limit costs a pause of a second, a whole window. The
// limiter holds the rate after a pause instead of probing again at the
// curve's period: over five minutes it pauses a handful of times and keeps
// most of the allowance.
func TestRetryAfterPausesAreRare(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.RateController = Cubic{} })
	s := &raSlidingLog{window: time.Second, allowance: 50}
	const d = 5 * time.Minute
	pauses := 0
	accepted := serverRun(r, d, 2*time.Millisecond, 60*time.Millisecond, s.decide, nil, func(at time.Duration) {
		if at >= r.PausedUntil() {
			pauses++ // a pause starts, not one lengthened
		}
	})
	allowance := int(d/time.Second) * s.allowance
	t.Logf("%d units accepted of %d, %d pauses", accepted, allowance, pauses)
	if accepted < allowance*90/100 {
		t.Errorf("%d units accepted of %d: want 90%% or more", accepted, allowance)
	}
	// Probing at the curve's period alone, it pauses 13 times here.
	if pauses > 10 {
		t.Errorf("%d pauses in %v: want 10 or fewer", pauses, d)
	}
}

// A small overshoot's throttle with a Retry-After cuts to 98% of the rate
// and holds it for 20 pauses after the pause; a larger one cuts to the
// accepted rate and holds nothing.
func TestRetryAfterHold(t *testing.T) {
	feed := func(r *Rate, from, to time.Duration, perSecond float64) {
		gap := time.Duration(float64(time.Second) / perSecond)
		for now := from; now < to; now += gap {
			r.waited = true
			r.Release(now, now-sec(0.05), 1, Success, 0)
		}
	}
	r := newTestRate(t, func(c *RateConfig) { c.RateController = Cubic{}; c.InitialUnitsPerMinute = 3000 })
	r.slowStart = false
	feed(r, 0, sec(5), 51) // everything sent is accepted
	before := r.Rate()
	r.Release(sec(5), sec(4.95), 1, Throttled, time.Second)
	if got, want := r.Rate(), pausedShare*before; got < want-1 || got > want+1 {
		t.Fatalf("rate %v after a small overshoot's throttle, want %v", got, want)
	}
	held := r.Rate()
	feed(r, sec(6), sec(6)+probeHoldPerPause*time.Second, 51)
	if r.Rate() != held {
		t.Fatalf("rate %v during the hold, want %v held", r.Rate(), held)
	}
	feed(r, sec(26), sec(60), 51)
	if r.Rate() <= held {
		t.Fatalf("rate %v 34 s after the hold, want above %v: the curve takes up again", r.Rate(), held)
	}

	r = newTestRate(t, func(c *RateConfig) { c.RateController = Cubic{}; c.InitialUnitsPerMinute = 5000 })
	r.slowStart = false
	feed(r, 0, sec(5), 40) // half of what the rate sends
	r.Release(sec(5), sec(4.95), 1, Throttled, time.Second)
	if r.probeHold.end != 0 {
		t.Fatal("a large overshoot's throttle held the rate")
	}
	if a := r.acceptedRate(); r.Rate() > pausedShare*a+1 {
		t.Fatalf("rate %v after a large overshoot's throttle, want at most %v of the accepted %v", r.Rate(), pausedShare, a)
	}
}
