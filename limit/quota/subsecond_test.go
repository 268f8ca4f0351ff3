package quota

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// A server of one of the kinds behind a window of a second, as the guard
// sees it through bare draft-03 fields: Limit, Remaining and Reset in
// whole seconds rounded up (at least 1), published only once 80% of the
// limit is used, as SharePoint does; a refusal carries Retry-After, which
// Reset then equals.
type draft3Server interface {
	// decide accepts (and counts) or refuses a unit arriving at at: the
	// units left after it, the time until the kind's reset, and for a
	// refusal the time until the unit would fit.
	decide(at time.Duration) (ok bool, remaining int, reset, fits time.Duration)
}

const draft3Limit = 50 // units a second

// tokenBucket20 holds 20 units and refills 50 a second.
type tokenBucket20 struct {
	tokens float64
	last   time.Duration
}

func (b *tokenBucket20) decide(at time.Duration) (bool, int, time.Duration, time.Duration) {
	b.tokens = min(20, b.tokens+(at-b.last).Seconds()*draft3Limit)
	b.last = at
	ok := b.tokens >= 1
	if ok {
		b.tokens--
	}
	toFull := time.Duration((20 - b.tokens) / draft3Limit * float64(time.Second))
	return ok, int(b.tokens), toFull, time.Duration((1 - b.tokens) / draft3Limit * float64(time.Second))
}

// fixedWindow counts limit units in a window that starts with the first
// unit after the last window ended (express-rate-limit).
type fixedWindow struct {
	window time.Duration
	limit  int
	start  time.Duration
	count  int
	open   bool
}

func (f *fixedWindow) decide(at time.Duration) (bool, int, time.Duration, time.Duration) {
	if !f.open || at >= f.start+f.window {
		f.start, f.count, f.open = at, 0, true
	}
	end := f.start + f.window - at
	if f.count >= f.limit {
		return false, 0, end, end
	}
	f.count++
	return true, f.limit - f.count, end, 0
}

// slidingLog keeps each accepted unit for window; limit units at most.
type slidingLog struct {
	window time.Duration
	limit  int
	at     []time.Duration
}

func (l *slidingLog) decide(at time.Duration) (bool, int, time.Duration, time.Duration) {
	for len(l.at) > 0 && l.at[0] <= at-l.window {
		l.at = l.at[1:]
	}
	ok := len(l.at) < l.limit
	if ok {
		l.at = append(l.at, at)
	}
	reset := l.window
	if len(l.at) > 0 {
		reset = l.at[0] + l.window - at
	}
	return ok, l.limit - len(l.at), reset, reset
}

// draft3Header is what the server publishes about a decision.
func draft3Header(limit int, ok bool, remaining int, reset, fits time.Duration) http.Header {
	h := http.Header{}
	whole := func(d time.Duration) string { return strconv.Itoa(max(int((d+time.Second-1)/time.Second), 1)) }
	if !ok {
		h.Set("Retry-After", whole(fits))
		reset = fits
	} else if 5*(limit-remaining) < 4*limit {
		return nil // below 80% of the limit used: silence
	}
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", whole(reset))
	return h
}

// draft3Run drives g for key against s as httpx does, behind a pacer:
// callers with more demand than it lets through ask at most perSecond
// times a second, each held until the guard admits it,
// attempt reaching the server 20 to 40 ms after it goes and its answer
// coming back as long again. It returns the units accepted and refused
// from from on.
func draft3Run(t *testing.T, g *Guard, key string, s draft3Server, limit, perSecond int, start, run, from time.Duration) (accepted, refused int) {
	t.Helper()
	type flight struct {
		sent, arrive, answer time.Duration
		status               int
		h                    http.Header
	}
	var out []*flight
	leg := func(i int) time.Duration { return time.Duration(20+(i*7919)%21) * time.Millisecond }
	pace := time.Second / time.Duration(perSecond)
	sent, next := 0, start
	for now := start; now < run; now += time.Millisecond {
		kept := out[:0]
		for _, f := range out {
			if f.status == 0 && f.arrive <= now {
				ok, rem, reset, fits := s.decide(f.arrive)
				f.status, f.h = http.StatusOK, draft3Header(limit, ok, rem, reset, fits)
				if !ok {
					f.status = http.StatusTooManyRequests
				}
				if f.arrive >= from {
					if ok {
						accepted++
					} else {
						refused++
					}
				}
			}
			if f.status != 0 && f.answer <= now {
				g.Observe(key, Response{Status: f.status, Header: f.h, Sent: t0.Add(f.sent), Cost: 1}, t0.Add(now))
				continue
			}
			kept = append(kept, f)
		}
		out = kept
		if now >= next && admit(g, key, t0.Add(now)) == 0 {
			next = max(next+pace, now-pace) // a pacer's bucket of two
			a := now + leg(sent)
			out = append(out, &flight{sent: now, arrive: a, answer: a + leg(sent+1)})
			sent++
		}
	}
	return accepted, refused
}

// subSecondSpends runs the guard against s at perSecond for 30 s and checks
// that over the last 20 s the server accepted at least wantPercent of its
// rate, refused at most 1% and that the window learned is the second its
// resets bound, not SharePoint's documented minute. It returns the key's
// entry.
func subSecondSpends(t *testing.T, s draft3Server, perSecond, wantPercent int) *entry {
	t.Helper()
	g := newGuard(t, Options{})
	accepted, refused := draft3Run(t, g, "k", s, draft3Limit, perSecond, 0, 30*time.Second, 10*time.Second)
	if want := 20 * draft3Limit * wantPercent / 100; accepted < want || refused > accepted/100 {
		t.Errorf("%d accepted, %d refused in 20 s: want at least %d, at most 1%% refused", accepted, refused, want)
	}
	if st, _ := g.State("k", t0.Add(30*time.Second)); st.Window != time.Second {
		t.Errorf("window %v, want the second its resets bound", st.Window)
	}
	return g.lookup("k")
}

// A bucket of 20 that refills 50 a second, behind bare draft-03 fields:
// every reset says 1 s, and Remaining climbs back while it does. The guard
// learns that the server gives units back as it goes, and spends about
// the refill without a refusal: not 20 units a second, which a client
// taking each reset for a new window would.
func TestSubSecondBucketLearnsRefill(t *testing.T) {
	if e := subSecondSpends(t, &tokenBucket20{tokens: 20}, 60, 95); !e.gradual || e.fixed {
		t.Errorf("gradual %v, fixed %v: want a server that gives units back as it goes", e.gradual, e.fixed)
	}
}

// A fixed window of a second: its figures show nothing coming back until
// it ends, when the server falls silent again. The guard takes it for a
// fixed window, holds once the limit is spent until the window the
// attempt that opened it found has ended, not for the whole second a
// reset rounded up names, and opens the next without a probe.
func TestSubSecondFixedWindowHoldsToItsEnd(t *testing.T) {
	if e := subSecondSpends(t, &fixedWindow{window: time.Second, limit: draft3Limit}, 49, 90); !e.fixed || e.gradual {
		t.Errorf("fixed %v, gradual %v: want a fixed window", e.fixed, e.gradual)
	}
}

// A sliding log of a minute spent at a steady pace also answers with
// resets of a second (its oldest unit leaves within one), but once it is
// spent, units come back at the pace they were spent a minute ago, far
// slower than its limit a second: the guard keeps the documented minute.
func TestSubSecondNotForAMinuteLogSpentSteadily(t *testing.T) {
	g := newGuard(t, Options{})
	log := &slidingLog{window: time.Minute, limit: 3000}
	for i := range 2300 { // a unit every 26 ms for the minute before the guard hears of it
		log.at = append(log.at, time.Duration(i)*26*time.Millisecond-time.Minute+50*time.Millisecond)
	}
	g.own("m", t0.UnixNano()).contacted = true
	draft3Run(t, g, "m", log, 3000, 60, 0, 30*time.Second, 0)
	if st, _ := g.State("m", t0.Add(30*time.Second)); st.Window != time.Minute {
		t.Errorf("window %v: a log that gives back what it took a minute ago keeps the documented minute", st.Window)
	}
}

// A sliding log of a second gives back each unit a second after it came:
// a count refilled at 50 a second is right on average, but the jitter of
// the legs makes it refuse a unit that comes a little early, with a
// Retry-After of a whole second. After a refusal its count had room for,
// a key of at most a second keeps a log of its units, each counting until
// the server must have let it go: while no answer dates them, a window and
// a half after it went. Within that time no more than the limit less the
// reserve goes, where the count alone would let a second's refill more.
func TestSubSecondLogAfterRefusal(t *testing.T) {
	g := newGuard(t, Options{})
	draft3Run(t, g, "l", &tokenBucket20{tokens: 20}, draft3Limit, 60, 0, 30*time.Second, 0)
	if e := g.lookup("l"); !e.gradual || e.sub.log != nil {
		t.Fatalf("gradual %v, log %v: want a bucket's count and no log", e.gradual, e.sub.log != nil)
	}
	now := t0.Add(30 * time.Second)
	for admit(g, "l", now) != 0 { // the count refills at 50 a second
		now = now.Add(5 * time.Millisecond)
	}
	g.Observe("l", Response{Status: http.StatusTooManyRequests, Header: draft3Header(draft3Limit, false, 0, time.Second, time.Second),
		Sent: now, Cost: 1, Paced: true}, now.Add(50*time.Millisecond))
	if g.lookup("l").sub.log == nil {
		t.Fatal("no log after a refusal the count had room for")
	}
	from := now.Add(2 * time.Second) // after the Retry-After
	sent := 0
	for at := from; at.Before(from.Add(1500 * time.Millisecond)); at = at.Add(5 * time.Millisecond) {
		for admit(g, "l", at) == 0 {
			sent++
		}
	}
	if sent > draft3Limit-1 || sent < draft3Limit-2 {
		t.Errorf("%d units in a window and a half with no answer, want the limit less the reserve, %d", sent, draft3Limit-1)
	}
}
