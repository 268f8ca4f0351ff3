package quota

import (
	"math"
	"testing"
	"time"
)

// bucketAnswers feeds r the figures of a token bucket of capacity units
// refilled at perSecond, spent at spend units a second from empty, for d:
// each attempt is answered with what the bucket then held. It returns the
// units the bucket accepted.
func bucketAnswers(r *refillRate, capacity, perSecond, spend float64, d time.Duration, full func(rem int64) bool) int64 {
	const step = 10 * time.Millisecond
	held, owed, sent, t0 := 0.0, 0.0, int64(0), int64(time.Hour)
	for at := time.Duration(0); at < d; at += step {
		held = math.Min(capacity, held+perSecond*step.Seconds())
		owed += spend * step.Seconds()
		for owed >= 1 && held >= 1 {
			owed--
			held--
			sent++
			rem := int64(held)
			r.observe(t0+int64(at), sent, 0, rem, full(rem))
		}
	}
	return sent
}

// What comes back between the client's attempts is the bucket's rate,
// whatever the client spends above it: 50 a second within 2%.
func TestRefillRateOfABucket(t *testing.T) {
	var r refillRate
	bucketAnswers(&r, 20, 50, 80, 20*time.Second, func(int64) bool { return false })
	if got := r.perNs() * 1e9; math.Abs(got-50) > 1 {
		t.Fatalf("rate %.2f a second, want 50", got)
	}
}

// A bucket that stays full says only that the rate is at least what was
// spent; spending at the rate known and staying full says it is higher.
func TestRefillRateProbesUpWhenClipped(t *testing.T) {
	var r refillRate
	// Learned at 10 a second, then spent at 10 a second from a bucket
	// refilling at 50: it stays full.
	r.units, r.span = 10, float64(time.Second)
	bucketAnswers(&r, 20, 50, 10, 3*time.Second, func(rem int64) bool { return rem >= 18 })
	if got := r.perNs() * 1e9; got < refillProbe*10*0.95 {
		t.Fatalf("rate %.2f a second after full baselines at 10, want about %.1f", got, refillProbe*10)
	}
}

// A baseline clipped while spending well below the rate known says
// nothing new: the rate stays.
func TestRefillRateKeepsRateWhenIdleAndFull(t *testing.T) {
	var r refillRate
	r.units, r.span = 50, float64(time.Second)
	bucketAnswers(&r, 20, 50, 5, 3*time.Second, func(int64) bool { return true })
	if got := r.perNs() * 1e9; math.Abs(got-50) > 1e-6 {
		t.Fatalf("rate %.2f a second, want the 50 known", got)
	}
}

// A throttle of an attempt the count had room for cuts the rate, and the
// next baseline starts at the next answer.
func TestRefillRateMisfitCuts(t *testing.T) {
	r := refillRate{units: 50, span: float64(time.Second), at: 123}
	r.misfit()
	if got := r.perNs() * 1e9; math.Abs(got-refillCut*50) > 1e-6 || r.at != 0 {
		t.Fatalf("after a misfit: rate %.2f, baseline at %d; want %.1f and a new baseline", got, r.at, refillCut*50)
	}
}

// A baseline shorter than refillBaseline measures nothing; a restart
// forgets everything.
func TestRefillRateBaselineAndRestart(t *testing.T) {
	var r refillRate
	r.observe(1, 1, 0, 10, false)
	r.observe(1+int64(refillBaseline)/2, 20, 0, 10, false)
	if r.perNs() != 0 {
		t.Fatalf("half a baseline gave %v", r.perNs())
	}
	r.observe(1+int64(refillBaseline), 30, 0, 10, false)
	if got := r.perNs() * float64(refillBaseline); math.Abs(got-29) > 1e-9 {
		t.Fatalf("returned %.2f units over the baseline, want 29", got)
	}
	r.restart()
	if r != (refillRate{}) {
		t.Fatalf("restart left %+v", r)
	}
}

// A bucket of 10 refilling 20 a second that counts requests, not units
// (nginx), publishing X-RateLimit-* with no reset ahead, answers a costly
// first attempt (5 units) with 9 left: what it held then, by the client's
// units, overstates its depth. Once its rate is known, a client spending
// slowly finds it at the most it ever shows left, giving back no more than
// was spent because it can hold no more: those baselines are clipped, and
// must not teach the rate down to the client's own pace.
func TestFullBucketDoesNotTeachItsRateDown(t *testing.T) {
	const perSecond = 20.0
	g := newGuard(t, Options{})
	now := t0
	admitN(g, "b", now, 5)
	answer(g, "b", now, now.Add(40*time.Millisecond), 5, 200, xh(9, 600, 0))
	e := g.lookup("b")
	e.mu.Lock()
	e.rate.units, e.rate.span = perSecond, float64(time.Second) // as a drain would have shown
	e.mu.Unlock()
	for range 120 { // a minute at 2 a second: the bucket stays full
		now = now.Add(500 * time.Millisecond)
		if d := admit(g, "b", now); d != 0 {
			t.Fatalf("held %v at 2 a second under a rate of %.0f", d, perSecond)
		}
		answer(g, "b", now, now.Add(40*time.Millisecond), 1, 200, xh(9, 600, 0))
	}
	e.mu.Lock()
	r := e.rate.perNs() * float64(time.Second)
	e.mu.Unlock()
	if r < 0.75*perSecond {
		t.Fatalf("rate %.1f/s learned, want about the bucket's %.0f/s: a full bucket's baselines said only what the client spent", r, perSecond)
	}
}
