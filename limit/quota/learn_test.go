package quota

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// d6 builds draft-06 headers with a policy: remaining of limit per window,
// reset after reset (whole seconds, rounded up, left out at 0).
func d6(remaining, limit int, window, reset time.Duration) http.Header {
	h := http.Header{}
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Policy", strconv.Itoa(limit)+";w="+strconv.Itoa(int(window/time.Second)))
	if s := (reset + time.Second - 1) / time.Second; s > 0 {
		h.Set("RateLimit-Reset", strconv.Itoa(int(s)))
	}
	return h
}

// An attempt admitted at sent and answered at answered with h.
func answer(g *Guard, key string, sent, answered time.Time, cost int, status int, h http.Header) {
	g.Observe(key, Response{Status: status, Header: h, Sent: sent, Cost: cost}, answered)
}

// A server that answers every success with nothing left and no reset ahead
// (nginx's leaky bucket without a burst) has no room to read: the key is
// admitted as one that publishes nothing, and no pacer is given its limit.
func TestRoomlessServerPublishesNothingUsable(t *testing.T) {
	g := newGuard(t, Options{})
	if d := admit(g, "n", t0); d != 0 {
		t.Fatalf("first attempt held %v", d)
	}
	answer(g, "n", t0, t0.Add(40*time.Millisecond), 1, 200, xh(0, 50, 0))
	now := t0.Add(50 * time.Millisecond)
	for i := range 5 {
		if d := admit(g, "n", now); d != 0 {
			t.Fatalf("attempt %d held %v: nothing left is all this server ever shows", i, d)
		}
	}
	if st, _ := g.State("n", now); st.Known || st.PerMinute(time.Minute) != 0 {
		t.Fatalf("state %+v: want nothing a pacer would follow", st)
	}
	// The first figure with room is read as a probe's answer would be.
	answer(g, "n", now, now.Add(40*time.Millisecond), 1, 200, xh(30, 50, 0))
	if st, _ := g.State("n", now.Add(40*time.Millisecond)); !st.Known {
		t.Fatalf("room shown, state %+v: want the figures known", st)
	}
}

// A success with nothing left but a reset far ahead is a window spent, not
// a server without room: the key holds until the reset.
func TestSpentWindowIsNotRoomless(t *testing.T) {
	g := newGuard(t, Options{})
	admit(g, "w", t0)
	answer(g, "w", t0, t0.Add(40*time.Millisecond), 1, 200, xh(0, 50, 30*time.Second))
	if d := admit(g, "w", t0.Add(time.Second)); d <= 25*time.Second {
		t.Fatalf("wait %v, want until the reset about 29 s ahead", d)
	}
}

// A bucket whose depth is far below its published limit (a burst of 20
// under 3,000 a minute) keeps back its share of what it holds, and at
// least a unit, not 2% of the limit, which is more than it ever holds.
func TestShallowBucketReserve(t *testing.T) {
	g := newGuard(t, Options{})
	now := t0
	for range 2 * shallowAfter {
		admit(g, "b", now)
		answer(g, "b", now, now.Add(40*time.Millisecond), 1, 200, d6(19, 3000, time.Minute, 400*time.Millisecond))
		now = now.Add(100 * time.Millisecond)
	}
	e := g.lookup("b")
	if r := e.reserveOf(&g.c); r != 1 {
		t.Fatalf("reserve %d, want 1 of a bucket of 20 (2%% of the limit would be 60)", r)
	}
}

// Within a fixed window the server counts nothing but this client's
// attempts: after aloneAfter such figures the share kept back for others is
// lent, and one figure showing someone else's spending takes it back.
func TestReserveLentWhileAlone(t *testing.T) {
	g := newGuard(t, Options{})
	e := g.own("f", t0.UnixNano())
	e.mu.Lock()
	e.known, e.fixed, e.limit, e.remaining, e.reset, e.floor = true, true, 100, 100, t0.Add(time.Hour).UnixNano(), 100
	e.mu.Unlock()
	now := t0
	rem := 100
	for range aloneAfter + 1 { // the first figure has none before it
		if d := admit(g, "f", now); d != 0 {
			t.Fatalf("held %v with %d left", d, rem)
		}
		rem--
		answer(g, "f", now, now.Add(10*time.Millisecond), 1, 200, xh(rem, 100, time.Hour-now.Sub(t0)))
		now = now.Add(20 * time.Millisecond)
	}
	if r := e.reserveOf(&g.c); r != 0 {
		t.Fatalf("reserve %d after %d figures of its own count, want 0", r, aloneAfter)
	}
	// Someone else took 5.
	admit(g, "f", now)
	rem -= 6
	answer(g, "f", now, now.Add(10*time.Millisecond), 1, 200, xh(rem, 100, time.Hour-now.Sub(t0)))
	if r := e.reserveOf(&g.c); r != 2 {
		t.Fatalf("reserve %d after another client spent, want 2%% of 100", r)
	}
}

// A fixed window's next attempt goes when the window its first answer
// found must have ended: at most a window after the attempt arrived, a leg
// before the answer; the published reset, rounded up to the second, would
// hold it longer.
func TestFixedWindowNextAttemptAtItsEnd(t *testing.T) {
	g := newGuard(t, Options{})
	e := g.own("f", t0.UnixNano())
	e.mu.Lock()
	e.known, e.fixed, e.limit, e.window = true, true, 50, int64(time.Second)
	e.mu.Unlock()
	sent := t0
	admit(g, "f", sent)
	answered := sent.Add(80 * time.Millisecond) // a round trip of 80 ms: legs of at least 40 ms
	answer(g, "f", sent, answered, 1, 200, d6(49, 50, time.Second, 990*time.Millisecond))
	for range 48 {
		admit(g, "f", answered)
	}
	want := answered.Add(-2 * 40 * time.Millisecond).Add(time.Second)
	if d := admit(g, "f", answered); d != want.Sub(answered) {
		t.Fatalf("next window in %v, want %v (the published reset says 1 s)", d, want.Sub(answered))
	}
}

// Answers to attempts admitted at one instant match those attempts, even
// when more went at once than the admissions kept, so that the units still
// out come to nothing when every answer is in.
func TestSameInstantBurstAnswered(t *testing.T) {
	g := newGuard(t, Options{})
	e := g.own("s", t0.UnixNano())
	e.mu.Lock()
	e.known, e.contacted, e.limit, e.remaining, e.reset = true, true, 1000, 1000, t0.Add(time.Hour).UnixNano()
	e.mu.Unlock()
	for range 2 * admittedKept {
		if d := admit(g, "s", t0); d != 0 {
			t.Fatalf("held %v", d)
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var out int64
	for range 2 * admittedKept {
		out, _ = e.outSince(t0.UnixNano())
	}
	if out != 0 {
		t.Fatalf("%d units out after every answer, want 0", out)
	}
}

// A documented window is a guess: a window the client's own attempts
// opened, whose count is theirs, ends no later than its reset says, and
// the limit is read over that.
func TestDocumentedWindowBoundedByOwnWindow(t *testing.T) {
	g := newGuard(t, Options{})
	e := g.own("d", t0.UnixNano())
	e.contacted = true // nothing published below 80% of the quota
	now := t0
	for range 40 {
		if d := admit(g, "d", now); d != 0 {
			t.Fatalf("held %v", d)
		}
		now = now.Add(10 * time.Millisecond)
	}
	// draft-03 figures at 80% used, the window of 50 ending 10 s after the
	// first attempt.
	h := http.Header{}
	h.Set("RateLimit-Limit", "50")
	h.Set("RateLimit-Remaining", "10")
	h.Set("RateLimit-Reset", strconv.Itoa(int((10*time.Second-now.Sub(t0))/time.Second)+1))
	answer(g, "d", now.Add(-10*time.Millisecond), now, 1, 200, h)
	st, _ := g.State("d", now)
	if st.Window > 11*time.Second || st.Window < 9*time.Second {
		t.Fatalf("window %v, want about 10 s, not the documented minute", st.Window)
	}
}

// A sliding log (200 a 20 s window) publishing X-RateLimit-* without a
// window, spent by a client at a fifth of its rate, gives back only what
// the client spent a window ago: the rate its figures show is the client's
// own. The resets have shown the window, and the server holds its limit,
// so the window a pacer is given is that one, not one stretched to the
// client's own pace (which would hold the client to it for good).
func TestSlowSpenderOfSlidingLogKeepsTheWindowItsResetsShow(t *testing.T) {
	const limit, window = 200, 20 * time.Second
	g := newGuard(t, Options{})
	var log []time.Time // the server's: when each accepted unit arrived
	now := t0
	for i := range 280 { // a burst of 40, then an attempt every 500 ms for two minutes
		if d := admit(g, "s", now); d != 0 {
			t.Fatalf("attempt at %v held %v: the server always has room", now.Sub(t0), d)
		}
		at := now.Add(20 * time.Millisecond)
		for len(log) > 0 && !log[0].After(at.Add(-window)) {
			log = log[1:]
		}
		log = append(log, at)
		// When the oldest unit leaves, in epoch seconds rounded down
		// (Go's time.Unix), with the server's Date.
		h := xh(limit-len(log), limit, 0)
		h.Set("X-RateLimit-Reset", strconv.FormatInt(log[0].Add(window).Unix(), 10))
		h.Set("Date", at.UTC().Format(http.TimeFormat))
		answer(g, "s", now, at.Add(20*time.Millisecond), 1, 200, h)
		if i < 40 {
			now = now.Add(25 * time.Millisecond)
		} else {
			now = now.Add(500 * time.Millisecond)
		}
	}
	st, _ := g.State("s", now)
	if st.Window <= 0 || st.Window > window+time.Second {
		t.Fatalf("window %v, want at most the %v the resets showed", st.Window, window)
	}
}

// A bucket as deep as its limit (300 a minute, draft-06 with its policy)
// names when it is full again as its reset: once its resets have shown
// that, the window a pacer is given leaves room to spend its first fill at
// once, where a sliding log's resets, the age of its oldest unit, keep the
// pacer to the policy's rate.
func TestDeepBucketGivesThePacerRoom(t *testing.T) {
	const limit, perSecond = 300, 5.0
	run := func(bucket bool) State {
		g := newGuard(t, Options{})
		tokens, last := float64(limit), t0
		var log []time.Time
		now := t0
		for range 6000 { // two minutes, an attempt every 20 ms if the guard admits it
			now = now.Add(20 * time.Millisecond)
			if admit(g, "k", now) != 0 {
				continue
			}
			at := now.Add(20 * time.Millisecond)
			var left float64
			var reset time.Duration
			if bucket {
				tokens = min(limit, tokens+at.Sub(last).Seconds()*perSecond)
				last = at
				if tokens >= 1 {
					tokens--
				}
				left = tokens
				reset = time.Duration((limit - tokens) / perSecond * float64(time.Second))
			} else {
				for len(log) > 0 && !log[0].After(at.Add(-time.Minute)) {
					log = log[1:]
				}
				if len(log) < limit {
					log = append(log, at)
				}
				left = float64(limit - len(log))
				reset = log[0].Add(time.Minute).Sub(at)
			}
			answer(g, "k", now, at.Add(20*time.Millisecond), 1, 200, d6(int(left), limit, time.Minute, reset))
		}
		st, _ := g.State("k", now)
		return st
	}
	if st := run(true); st.Window >= time.Minute {
		t.Errorf("bucket: window %v, want less than its policy's minute", st.Window)
	}
	if st := run(false); st.Window != time.Minute {
		t.Errorf("resets that are no bucket's: window %v, want the policy's minute", st.Window)
	}
}
