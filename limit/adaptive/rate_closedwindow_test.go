package adaptive

import (
	"testing"
	"time"
)

// silentWindow is a fixed window that publishes nothing: allowance units a
// window, the window starting with the first request after the last one
// ended (express-rate-limit's memory store).
type silentWindow struct {
	window    time.Duration
	allowance int
	start     time.Duration
	open      bool
	count     int
}

func (s *silentWindow) decide(at time.Duration) bool {
	if !s.open || at >= s.start+s.window {
		s.open, s.start, s.count = true, at, 0
	}
	if s.count < s.allowance {
		s.count++
		return true
	}
	return false
}

// closedWindowRun drives r against s for d with a request offered every
// gap and a fixed round trip, and returns the units accepted, the
// throttles, and the most attempts sent while the window was spent in any
// one closed spell.
func closedWindowRun(r *Rate, s *silentWindow, d, gap, rtt time.Duration) (accepted, throttled, mostInSpell int) {
	inSpell := 0
	decide := func(at time.Duration) (bool, time.Duration) { return s.decide(at), 0 }
	accepted = serverRun(r, d, gap, rtt, decide, func(ok bool) {
		if ok {
			inSpell = 0
			return
		}
		throttled++
		inSpell++
		mostInSpell = max(mostInSpell, inSpell)
	}, nil)
	return accepted, throttled, mostInSpell
}

// serverRun drives r for d with a request offered every gap and a fixed
// round trip against decide, which says whether a request arriving at a
// time is accepted and, if not, its Retry-After (0: none). sent, when set,
// sees each verdict as the request arrives; throttle, when set, sees each
// throttle's arrival just before r is told. It returns the units accepted.
func serverRun(r *Rate, d, gap, rtt time.Duration, decide func(time.Duration) (bool, time.Duration), sent func(ok bool), throttle func(at time.Duration)) (accepted int) {
	type answer struct {
		at, sent, ra time.Duration
		ok           bool
	}
	var out []answer
	for now := time.Duration(0); now < d; now += gap {
		for len(out) > 0 && out[0].at <= now {
			a := out[0]
			out = out[1:]
			if a.ok {
				r.Release(a.at, a.sent, 1, Success, 0)
				continue
			}
			if throttle != nil {
				throttle(a.at)
			}
			r.Release(a.at, a.sent, 1, Throttled, a.ra)
		}
		if ok, _ := r.TryAcquire(now, 1); !ok {
			continue
		}
		ok, ra := decide(now + rtt/2)
		if ok {
			accepted++
		}
		if sent != nil {
			sent(ok)
		}
		out = append(out, answer{at: now + rtt, sent: now, ra: ra, ok: ok})
	}
	return accepted
}

// Against a fixed window of 10 s that publishes nothing, the limiter learns
// that a run of throttles means the window is spent: it stops and probes
// alone instead of sending at its rate into the closed window, learns the
// window's period and allowance from the reopenings, and paces the next
// windows so that they are not spent early.
func TestClosedWindowIsProbedAndLearned(t *testing.T) {
	c := DefaultRateConfig()
	c.RateController, c.Seed = Cubic{}, 7
	r, err := NewRate(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	s := &silentWindow{window: 10 * time.Second, allowance: 100}
	const d = 120 * time.Second
	accepted, throttled, spell := closedWindowRun(r, s, d, 5*time.Millisecond, 50*time.Millisecond)
	allowance := int(d/s.window) * s.allowance
	if accepted < allowance*9/10 {
		t.Errorf("%d units accepted of %d: want 90%% or more", accepted, allowance)
	}
	if throttled*20 > accepted+throttled {
		t.Errorf("%d of %d attempts throttled: want 5%% or fewer", throttled, accepted+throttled)
	}
	// At 200 requests a second, a second of sending into the spent window
	// would be 200 throttles in a row; the run says so within a fraction
	// of it, and the probes go one by one.
	if spell > 60 {
		t.Errorf("%d attempts in a row into a spent window", spell)
	}
	// The pace learned is the allowance over the window: 600 a minute.
	if got := r.Rate(); got < 0.85*600 || got > 1.3*600 {
		t.Errorf("rate %v after %v, want near 600 units a minute", got, d)
	}
}

// A throttle with no success between it and the next, for attempts sent
// within the run's grace, is no spent window: a bucket just below the rate
// answers so. The limiter keeps sending at its rate.
func TestShortRunDoesNotClose(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.RateController = Cubic{} })
	for ms := 0; ms < 2000; ms += 50 { // 20 units a second accepted
		now := time.Duration(ms) * time.Millisecond
		r.Release(now+sec(0.05), now, 1, Success, 0)
	}
	r.Release(sec(2.05), sec(2), 1, Throttled, 0)
	r.Release(sec(2.10), sec(2.05), 1, Throttled, 0)
	if r.win.closed {
		t.Fatal("two throttles 50 ms apart closed the window")
	}
	r.Release(sec(2.15), sec(2.1), 1, Success, 0)
	r.Release(sec(2.20), sec(2.15), 1, Throttled, 0)
	if r.win.closed || r.PausedUntil() > sec(2.2) {
		t.Fatal("a throttle after a success closed the window")
	}
}
