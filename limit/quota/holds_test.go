package quota

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// slidingLogServer is an exact sliding log that publishes Envoy's dialect:
// X-RateLimit-Limit, -Remaining and -Reset in delta seconds rounded down,
// the time until its oldest unit leaves the window, and no Retry-After.
type slidingLogServer struct {
	window time.Duration
	quota  int
	log    []time.Time
}

func (s *slidingLogServer) decide(now time.Time) (int, http.Header) {
	for len(s.log) > 0 && !s.log[0].Add(s.window).After(now) {
		s.log = s.log[1:]
	}
	status := http.StatusOK
	if len(s.log) < s.quota {
		s.log = append(s.log, now)
	} else {
		status = http.StatusTooManyRequests
	}
	var reset time.Duration
	if len(s.log) > 0 {
		reset = s.log[0].Add(s.window).Sub(now)
	}
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(s.quota))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(s.quota-len(s.log)))
	h.Set("X-RateLimit-Reset", strconv.Itoa(int(reset/time.Second)))
	return status, h
}

// runSlidingLog has a guard alone spend a sliding log for d, asking every
// step with one-way legs of 20 ms, and returns the units accepted and
// refused.
func runSlidingLog(t *testing.T, s *slidingLogServer, d, step time.Duration) (accepted, refused int) {
	t.Helper()
	g := newGuard(t, Options{})
	const leg = 20 * time.Millisecond
	type out struct{ sent, arrives time.Time }
	var flight []out
	for now := t0; now.Before(t0.Add(d)); now = now.Add(time.Millisecond) {
		for len(flight) > 0 && !flight[0].arrives.Add(leg).After(now) {
			a := flight[0]
			flight = flight[1:]
			status, h := s.decide(a.arrives)
			if status == http.StatusOK {
				accepted++
			} else {
				refused++
			}
			g.Observe("log", Response{Status: status, Header: h, Sent: a.sent, Cost: 1}, now)
		}
		if now.Sub(t0)%step != 0 {
			continue
		}
		if ok, _ := g.TryAcquireAt("log", now, 1); ok {
			flight = append(flight, out{sent: now, arrives: now.Add(leg)})
		}
	}
	return accepted, refused
}

// A sliding log gives nothing back before its reset, the time until its
// oldest unit leaves: a refusal that names a reset ahead with nothing
// remaining holds the key until then, as a Retry-After would, where a rate
// learned from bursts would send attempt after attempt into refusals.
func TestSlidingLogRefusalHoldsToItsReset(t *testing.T) {
	s := &slidingLogServer{window: 10 * time.Second, quota: 500}
	accepted, refused := runSlidingLog(t, s, 2*time.Minute, 5*time.Millisecond)
	if share := float64(refused) / float64(accepted+refused); share > 0.01 {
		t.Errorf("%d refused of %d sent (%.1f%%), want at most 1%%", refused, accepted+refused, 100*share)
	}
	if most := 500 * 12; accepted < most*9/10 {
		t.Errorf("%d accepted, want at least 90%% of the %d the log allows", accepted, most)
	}
}

// figuredEntry is a key's state, locked, that has read one figure of a
// limit of 50 at t0 (Unix nanoseconds, returned).
func figuredEntry(t *testing.T) (*entry, int64) {
	g := newGuard(t, Options{})
	e := g.own("k", t0.UnixNano())
	e.mu.Lock()
	t.Cleanup(e.mu.Unlock)
	e.limit, e.figures = 50, 1
	return e, t0.UnixNano()
}

// A server whose figures climb back before the reset they named (a sliding
// counter, whose reset is the end of its window) does not hold: its resets
// are bounds, and a refusal naming one leaves the count to refill.
func TestEarlyReturnsUnlearnHolding(t *testing.T) {
	e, n := figuredEntry(t)
	for i := range earlyReturns {
		if !e.resetsHold() {
			t.Fatalf("after %d early climbs the resets no longer hold, want %d", i, earlyReturns)
		}
		e.last, e.reset = 5, n+int64(3*time.Second)
		e.noteClimb(30, n)
	}
	if e.resetsHold() {
		t.Fatalf("resets hold after %d climbs before them", earlyReturns)
	}
	e.remaining, e.fillAt = 10, n
	q := Quota{Remaining: 0, Limit: 50}
	e.holdToReset(&reading{q: &q, n: n, qr: n + int64(2*time.Second)})
	if e.remaining != 10 || e.fillAt != n {
		t.Fatalf("count %d refilling from %d: a refusal of a server that gives back early holds nothing", e.remaining, e.fillAt-n)
	}
}

// A climb within the second before the reset named is the reset's own
// rounding, not an early return.
func TestClimbAtRoundedResetIsNoEarlyReturn(t *testing.T) {
	e, n := figuredEntry(t)
	for range 2 * earlyReturns {
		e.last, e.reset = 0, n+int64(900*time.Millisecond)
		e.noteClimb(40, n)
	}
	if !e.resetsHold() {
		t.Fatal("climbs within a second of the reset taken for early returns")
	}
}

// A sliding log paced over its window does not take a figure that shows a
// burst back as room to spend at once: the count refills at the limit over
// the window. A key that has not shown its resets hold takes it.
func TestHeldWindowNotLiftedByFigures(t *testing.T) {
	for _, tc := range []struct {
		name  string
		early int
		most  int64
	}{
		{"resets hold", 0, 10},
		{"resets are bounds", earlyReturns, 200},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, n := figuredEntry(t)
			e.limit, e.capacity, e.learned, e.early = 500, 500, int64(10*time.Second), tc.early
			e.known, e.gradual, e.continuous = true, true, true
			e.remaining, e.fillAt = 5, n
			q := Quota{Remaining: 200, Limit: 500}
			r := reading{q: &q, n: n + int64(40*time.Millisecond), sent: n, latest: true}
			e.takeGradual(&r, 200, e.refillPerNs(r.n))
			if e.remaining > tc.most || e.remaining < tc.most-10 {
				t.Fatalf("count %d after a figure of 200 over a count of 5, want about %d", e.remaining, tc.most)
			}
		})
	}
}
