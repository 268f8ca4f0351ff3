package adaptive

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// paused reports whether r is in a Retry-After pause at now.
func paused(r *Rate, now time.Duration) bool { return now < r.PausedUntil() }

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// newTestRate returns a Rate at t = 0 with the defaults and c applied. It
// pins the bucket (10 s), the cooldown (5 s) and the maximum (5,625) at the
// values the tests' arithmetic was written for; the defaults have tests of
// their own.
func newTestRate(t *testing.T, edit func(*RateConfig)) *Rate {
	t.Helper()
	c := DefaultRateConfig()
	c.InitialUnitsPerMinute = 1200
	c.BurstTime, c.DecreaseCooldown, c.MaxUnitsPerMinute = headroom.Duration(10*time.Second), headroom.Duration(5*time.Second), 5625
	if edit != nil {
		edit(&c)
	}
	r, err := NewRate(c, 0)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// take is TryAcquire's verdict alone.
func take(r *Rate, now time.Duration, cost int) bool {
	ok, _ := r.TryAcquire(now, cost)
	return ok
}

// A refusal says how long until the request could go: the wait Enqueue
// would expect, behind the queue and after a pause; a grant says 0.
func TestRateTryAcquireRetryAfterIsEnqueuesWait(t *testing.T) {
	empty := func() *Rate { // 10 a second, a bucket of 10, spent at 0
		r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 600; c.BurstTime = headroom.Duration(time.Second) })
		if ok, ra := r.TryAcquire(0, 10); !ok || ra != 0 {
			t.Fatalf("TryAcquire(0, 10) on a full bucket = %v, %v; want true, 0", ok, ra)
		}
		return r
	}
	for _, c := range []struct {
		now       time.Duration
		cost      int
		wantRetry time.Duration
	}{
		{0, 1, 100 * time.Millisecond},         // one unit at 10 a second
		{sec(0.05), 3, 250 * time.Millisecond}, // half a unit there already
		{0, 25, time.Second},                   // larger than the bucket: once it is full
	} {
		r := empty()
		ok, ra := r.TryAcquire(c.now, c.cost)
		if ok || ra != c.wantRetry {
			t.Errorf("TryAcquire(%v, %d) = %v, %v; want false, %v", c.now, c.cost, ok, ra, c.wantRetry)
		}
		if _, wait, _ := r.Enqueue(c.now, c.cost); wait != ra {
			t.Errorf("Enqueue(%v, %d) expects %v, TryAcquire said %v", c.now, c.cost, wait, ra)
		}
	}
	// Behind 8 queued units, with the bucket refilled to hold them: one
	// more unit's 0.1 s.
	r := empty()
	r.Enqueue(0, 8)
	if ok, ra := r.TryAcquire(sec(0.8), 1); ok || ra != 100*time.Millisecond {
		t.Fatalf("TryAcquire behind the queue = %v, %v; want false, 100ms", ok, ra)
	}
	// A Retry-After's pause: nothing until it ends, then the bucket refills
	// from empty.
	r = empty()
	r.onThrottled(0, 0, 1, sec(2))
	if ok, ra := r.TryAcquire(sec(1), 1); ok || ra <= sec(1) {
		t.Fatalf("TryAcquire during a pause = %v, %v; want false, beyond the pause's end", ok, ra)
	}
}

func near(a, b float64) bool {
	return math.Abs(a-b) <= 1e-9*math.Max(1, math.Max(math.Abs(a), math.Abs(b)))
}

func wantRate(t *testing.T, r *Rate, want float64) {
	t.Helper()
	if got := r.Rate(); !near(got, want) {
		t.Fatalf("rate = %v units/min, want %v", got, want)
	}
}

// A burst of 20 throttles from requests sent before a cut gives exactly one
// cut, even when some arrive after the cooldown.
func TestRateBurstOfThrottlesGivesOneCut(t *testing.T) {
	r := newTestRate(t, nil)
	for i := range 20 {
		sent := sec(9 + float64(i)*0.05) // all sent before the first answer
		now := sec(10 + float64(i)*0.5)  // answers from 10 s to 19.5 s
		r.onThrottled(now, sent, 1, 0)
	}
	if c := r.Counts(); c.Cuts != 1 || c.Throttles != 20 {
		t.Fatalf("cuts = %d, throttles = %d; want 1 and 20", c.Cuts, c.Throttles)
	}
	wantRate(t, r, 1200*0.7)
}

// A throttle after the cooldown from a request sent after the cut gives a
// second cut; one inside the cooldown does not.
func TestRateSecondCutNeedsCooldownAndLaterSend(t *testing.T) {
	r := newTestRate(t, nil)
	if ch := r.onThrottled(sec(10), sec(9.9), 1, 0); ch&ChangeCut == 0 {
		t.Fatal("first throttle did not cut")
	}
	if ch := r.onThrottled(sec(14.9), sec(11), 1, 0); ch&ChangeCut != 0 {
		t.Fatal("cut inside the cooldown")
	}
	if ch := r.onThrottled(sec(15), sec(10), 1, 0); ch&ChangeCut != 0 {
		t.Fatal("cut for a request sent at the last cut, not after it")
	}
	if ch := r.onThrottled(sec(15), sec(10.001), 1, 0); ch&ChangeCut != 0 {
		t.Fatal("cut with nothing accepted since the last cut")
	}
	r.onSuccess(sec(15), sec(14.9), 1)
	if ch := r.onThrottled(sec(15), sec(10.001), 1, 0); ch&ChangeCut == 0 {
		t.Fatal("no second cut after the cooldown for a request sent after the cut")
	}
	wantRate(t, r, 1200*0.7*0.7)
}

// The limiter never raises on a throttle and never goes below the minimum,
// whatever the controller proposes.
func TestRateThrottleNeverRaisesNorGoesBelowMin(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.RateController = fixed{throttle: 5000} })
	r.onThrottled(sec(1), 0, 1, 0)
	wantRate(t, r, 1200)
	r = newTestRate(t, func(c *RateConfig) { c.RateController = fixed{throttle: 1} })
	r.onThrottled(sec(1), 0, 1, 0)
	wantRate(t, r, defaultMinUnitsPerMinute)
	r = newTestRate(t, func(c *RateConfig) { c.RateController = fixed{throttle: math.NaN()} })
	r.onThrottled(sec(1), 0, 1, 0)
	wantRate(t, r, 1200)
}

type fixed struct {
	throttle, success float64
}

func (f fixed) OnThrottled(RateState) float64 { return f.throttle }
func (f fixed) OnSuccess(s RateState) (float64, bool) {
	return f.success, f.success != 0
}

// A Retry-After of 45 s pauses 30 s (MaxPause): nothing is admitted, no
// increase happens, and the bucket restarts empty. Then one attempt goes
// to probe, and the others wait for its answer, at most until the
// server's end.
func TestRatePauseCappedAndBucketRestartsEmpty(t *testing.T) {
	r := newTestRate(t, nil) // 1200/min = 20 units a second, bucket 200
	ch := r.onThrottled(sec(10), sec(9), 1, sec(45))
	if ch&ChangePause == 0 {
		t.Fatal("no pause")
	}
	if got := r.PausedUntil(); got != sec(40) {
		t.Fatalf("paused until %v, want 40s", got)
	}
	if !paused(r, sec(39.999)) || paused(r, sec(40)) {
		t.Fatal("Paused wrong around 40 s")
	}
	if take(r, sec(20), 1) {
		t.Fatal("admitted during the pause")
	}
	// Waiting and successes during the pause change nothing.
	r.Enqueue(sec(20), 1)
	if ch := r.onSuccess(sec(39), sec(5), 1); ch != 0 {
		t.Fatalf("success during the pause changed %v", ch)
	}
	if tok := r.Tokens(sec(40)); tok != 0 {
		t.Fatalf("tokens at the end of the pause = %v, want 0 (empty)", tok)
	}
	// The queued request goes one unit's time after the pause (rate 840).
	at, ok := r.Next(sec(20))
	if want := sec(40) + durationFor(1, 840/float64(time.Minute)); !ok || at != want {
		t.Fatalf("head leaves at %v, want %v", at, want)
	}
	if _, ok := r.Dequeue(at - 1); ok {
		t.Fatal("head left early")
	}
	if w, ok := r.Dequeue(at); !ok || !w.Granted {
		t.Fatal("head did not leave on time")
	}
	// The increase clock counts from the end of the pause.
	if s := r.state(sec(45)); s.SinceLastIncrease != sec(5) || s.SinceLastDecrease != sec(35) {
		t.Fatalf("state after the pause: %+v", s)
	}
	// The server said 45 s: the request that left after the capped pause
	// was a probe, and the next waits for its answer or the server's end.
	if ok, _ := r.TryAcquire(sec(45), 1); ok {
		t.Fatal("a second attempt went before the probe's answer and the server's end")
	}
	if ok, _ := r.TryAcquire(sec(54), 1); ok {
		t.Fatal("a second attempt went before the server's end")
	}
	// The probe is given up for lost after four round trips (the one
	// answered at 39 s took 34 s) and the server's end: another goes.
	if ok, _ := r.TryAcquire(sec(70), 1); !ok {
		t.Fatal("nothing went after the server's end and the probe's wait")
	}
	// No pause with MaxPause 0.
	r = newTestRate(t, func(c *RateConfig) { c.MaxPause = -1 }) // never pause
	if ch := r.onThrottled(sec(10), sec(9), 1, sec(45)); ch&ChangePause != 0 || paused(r, sec(11)) {
		t.Fatal("paused with MaxPause 0")
	}
}

// MaxWait and MaxPause at their largest ("as long as it takes") saturate
// instead of wrapping into the past: Next then says when Dequeue will let
// the head go (a shell's timer set for it would otherwise fire at once, for
// ever), and a pause of MaxInt64 lasts, refusing what would wait too long.
func TestRateHugeMaxWaitAndPauseSaturate(t *testing.T) {
	const forever = time.Duration(math.MaxInt64)
	r := newTestRate(t, func(c *RateConfig) { c.MaxWait = headroom.Duration(forever) }) // 20 units a second
	now := sec(1)
	for take(r, now, 1) {
	}
	if _, _, ok := r.Enqueue(now, 1); !ok {
		t.Fatal("Enqueue refused")
	}
	at, ok := r.Next(now)
	if want := now + sec(0.05); !ok || at != want {
		t.Fatalf("Next(%v) = %v, %v; want %v (one unit at 20 a second)", now, at, ok, want)
	}
	if _, ok := r.Dequeue(at - 1); ok {
		t.Fatal("the head left before Next's time")
	}
	if w, ok := r.Dequeue(at); !ok || !w.Granted {
		t.Fatalf("Dequeue at Next's time = %+v, %v; want granted", w, ok)
	}

	for _, maxWait := range []time.Duration{defaultMaxWait, forever} {
		// At a rate so low that one unit takes longer than MaxInt64 ns, the
		// expected wait saturates too.
		r := newTestRate(t, func(c *RateConfig) {
			c.MinUnitsPerMinute, c.InitialUnitsPerMinute = 1e-9, 1e-9
			c.MaxPause, c.MaxWait = headroom.Duration(forever), headroom.Duration(maxWait)
		})
		if ch := r.onThrottled(sec(10), sec(9), 1, forever); ch&ChangePause == 0 {
			t.Fatal("no pause")
		}
		if got := r.PausedUntil(); got != forever {
			t.Fatalf("paused until %v; want %v (saturated)", got, forever)
		}
		if !paused(r, sec(11)) || take(r, sec(11), 1) {
			t.Fatal("not paused, or admitted, a second into an endless pause")
		}
		if s := r.state(sec(11)); s.PausedSinceLastDecrease != sec(1) || s.SinceLastIncrease != 0 {
			t.Fatalf("state a second into an endless pause: %+v", s)
		}
		_, wait, queued := r.Enqueue(sec(11), 1)
		if maxWait == defaultMaxWait {
			if queued || wait <= 0 {
				t.Fatalf("Enqueue into an endless pause with MaxWait %v = %v, %v; want refused (max_wait) with a wait above 0", maxWait, queued, wait)
			}
			continue
		}
		if !queued {
			t.Fatalf("Enqueue into an endless pause with MaxWait %v refused", maxWait)
		}
		if at, ok := r.Next(sec(11)); !ok || at != forever {
			t.Fatalf("Next in an endless pause = %v, %v; want %v", at, ok, forever)
		}
		if _, ok := r.Dequeue(sec(12)); ok {
			t.Fatal("the head left during an endless pause")
		}
		// The expected wait a shell holds a deadline against saturates too.
		if ok, wait := r.TryAcquire(sec(12), 1); ok || wait < forever/2 {
			t.Fatalf("TryAcquire into an endless pause = %v, %v; want refused with a wait of about for ever", ok, wait)
		}
	}
}

// AIMD rises only after 10 s in which requests waited. (A throttle first
// ends the slow start.)
func TestRateNoIncreaseWithoutWaiting(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 1200 / 0.7 })
	r.slowStart = false       // as after a first cut …
	r.onThrottled(0, 0, 1, 0) // … so that this throttle cuts by AIMD's 0.7
	for s := 1; s <= 60; s++ {
		if !take(r, sec(float64(s)), 1) {
			t.Fatal("refused")
		}
		r.onSuccess(sec(float64(s)+0.1), sec(float64(s)), 1)
	}
	wantRate(t, r, 1200)
	// Now requests wait: the next success after the interval climbs 120.
	r.Enqueue(sec(61), 5000)
	r.onSuccess(sec(61), sec(60), 1)
	wantRate(t, r, 1320)
	// The rise cleared Waited, but the waiter is still queued: it still
	// counts, and 10 s later the rate climbs again; not before.
	r.onSuccess(sec(70.9), sec(70), 1)
	wantRate(t, r, 1320)
	r.onSuccess(sec(71), sec(70), 1)
	wantRate(t, r, 1440)
}

// A client that never waits never climbs, under either controller.
func TestRateQuietClientNeverClimbs(t *testing.T) {
	for _, ctl := range []RateController{AIMD{}, Cubic{}} {
		r := newTestRate(t, func(c *RateConfig) { c.RateController = ctl })
		for ms := 100; ms <= 600_000; ms += 100 { // 10 units a second for 10 min
			now := time.Duration(ms) * time.Millisecond
			if !take(r, now, 1) {
				t.Fatalf("%T: refused at %v", ctl, now)
			}
			r.onSuccess(now+time.Millisecond, now, 1)
		}
		wantRate(t, r, 1200)
		if c := r.Counts(); c.Increases != 0 {
			t.Fatalf("%T: %d increases", ctl, c.Increases)
		}
	}
}

// A request of cost 0 neither waits nor changes anything, even behind a
// queue and in a pause.
func TestRateCostZeroChangesNothing(t *testing.T) {
	r := newTestRate(t, nil)
	r.onThrottled(sec(1), 0, 1, sec(10))
	r.Enqueue(sec(2), 3)
	before, tok, counts := r.state(sec(3)), r.Tokens(sec(3)), r.Counts()
	if !take(r, sec(3), 0) {
		t.Fatal("cost 0 waited")
	}
	if r.state(sec(3)) != before || r.Tokens(sec(3)) != tok || r.Counts() != counts {
		t.Fatal("cost 0 changed the state")
	}
}

// A request larger than the bucket goes when the bucket is full, drives it
// below zero and so pays its full cost.
func TestRateOversizedRequestDrivesBucketNegative(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 60; c.BurstTime = headroom.Duration(10 * time.Second) })
	if r.size != 10 {
		t.Fatalf("bucket size %v, want 10", r.size)
	}
	if !take(r, 0, 1) { // 9 left
		t.Fatal("refused")
	}
	if take(r, 0, 25) {
		t.Fatal("oversized admitted before the bucket was full")
	}
	r.Enqueue(0, 25)
	at, _ := r.Next(0)
	if at != sec(1) {
		t.Fatalf("oversized leaves at %v, want 1s (bucket full)", at)
	}
	if w, ok := r.Dequeue(at); !ok || !w.Granted || w.Cost != 25 {
		t.Fatalf("dequeue = %+v, %v", w, ok)
	}
	if tok := r.Tokens(at); !near(tok, -15) {
		t.Fatalf("tokens = %v, want -15", tok)
	}
	// The next unit waits for the debt: 16 s.
	r.Enqueue(at, 1)
	if next, _ := r.Next(at); next != sec(17) {
		t.Fatalf("next unit at %v, want 17s", next)
	}
	// A bucket always holds at least 1 unit.
	r = newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.BurstTime = 1, 1, headroom.Duration(time.Second)
	})
	if r.size != 1 {
		t.Fatalf("bucket size %v, want 1", r.size)
	}
}

// Waiters leave in FIFO order across a rate change, and a rate change keeps
// the tokens up to the new size.
func TestRateFIFOSurvivesRateChange(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 600; c.BurstTime = headroom.Duration(time.Second) }) // 10/s, bucket 10
	if !take(r, 0, 10) {
		t.Fatal("refused")
	}
	a, _, _ := r.Enqueue(0, 8)
	b, _, _ := r.Enqueue(0, 1)
	c, _, _ := r.Enqueue(0, 3)
	r.onThrottled(sec(0.5), 0, 1, 0) // 600 → 420: 7 a second, bucket 7
	if r.size != 7 || !near(r.Tokens(sec(0.5)), 5) {
		t.Fatalf("after the cut: size %v, tokens %v; want 7 and 5", r.size, r.Tokens(sec(0.5)))
	}
	var order []uint64
	for now := sec(0.5); len(order) < 3 && now < sec(10); {
		if w, ok := r.Dequeue(now); ok {
			order = append(order, w.ID)
			continue
		}
		now, _ = r.Next(now)
	}
	if len(order) != 3 || order[0] != a || order[1] != b || order[2] != c {
		t.Fatalf("order %v, want %v", order, []uint64{a, b, c})
	}
	// 5 tokens at 0.5 s; a needs 7 (the bucket is full): at 0.5+2/7 s.
}

// Changing the instance count rescales the current rate exactly, and the
// controllers' whole-budget steps are divided by the count.
func TestRateInstanceShareRescales(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.Instances = 2 })
	wantRate(t, r, 600)
	if s := r.state(0); s.MinRate != 30 || s.MaxRate != 2812.5 || s.InstanceCount != 2 {
		t.Fatalf("share: %+v", s)
	}
	r.onThrottled(sec(1), 0, 1, 0) // 420 per process, 840 whole
	r.SetInstances(sec(2), 3)
	wantRate(t, r, 280)
	if w := r.WholeRate(); !near(w, 840) {
		t.Fatalf("whole rate %v, want 840", w)
	}
	if s := r.state(sec(2)); s.RateBeforeLastDecrease != 400 || s.MaxRate != 1875 {
		t.Fatalf("after rescale: %+v", s)
	}
	// AIMD's step is 120 for the whole budget: 40 each for 3 instances.
	r.Enqueue(sec(2), 1e6)
	r.onSuccess(sec(12), sec(11), 1)
	wantRate(t, r, 320)
	r.SetInstances(sec(12), 1)
	wantRate(t, r, 960)
	r.SetInstances(sec(12), 0) // ignored
	wantRate(t, r, 960)
}

// Disabled admits everything at once, never changes the rate and never
// pauses, but records the units and the throttles.
func TestRateDisabledAdmitsAndRecords(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.Disabled = true })
	for i := range 1000 {
		if !take(r, sec(float64(i)/1000), 7) {
			t.Fatal("disabled limiter held a request back")
		}
	}
	for i := range 10 {
		if ch := r.onThrottled(sec(1+float64(i)), sec(float64(i)), 7, sec(30)); ch != 0 {
			t.Fatalf("throttle changed %v", ch)
		}
		r.Enqueue(sec(1+float64(i)), 1)
		r.onSuccess(sec(1.5+float64(i)), sec(1+float64(i)), 2)
	}
	wantRate(t, r, 1200)
	c := r.Counts()
	if c.Units != 7000 || c.Throttles != 10 || c.Cuts != 0 || c.Pauses != 0 || c.Responses != 90 {
		t.Fatalf("counts %+v", c)
	}
	if paused(r, sec(12)) || r.MeasuredRate() == 0 {
		t.Fatal("disabled paused, or measured nothing")
	}
}

// A refusal names the wait a queued request would expect, Enqueue refuses
// a wait beyond MaxWait, and a waiter that has waited MaxWait leaves
// ungranted.
func TestRateQueueRefusals(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxWait = 6, 60, headroom.Duration(10*time.Second)
	}) // one unit a second, bucket 10
	take(r, 0, 10)
	if ok, wait := r.TryAcquire(0, 1); ok || wait != sec(1) {
		t.Fatalf("TryAcquire on an empty bucket = %v, %v; want refused, 1s (what a deadline is held against)", ok, wait)
	}
	w1, _, _ := r.Enqueue(0, 3)
	w2, _, _ := r.Enqueue(0, 3)
	if ok, wait := r.TryAcquire(0, 5); ok || wait != sec(11) {
		t.Fatalf("TryAcquire behind 6 queued units = %v, %v; want refused, 11s", ok, wait)
	}
	if _, wait, ok := r.Enqueue(0, 5); ok || wait != sec(1) {
		t.Fatalf("max wait: %v %v", ok, wait) // 6 + 5 units: 11 s, 1 s too long
	}
	if _, wait, ok := r.Enqueue(0, 1); !ok || wait != sec(7) {
		t.Fatalf("third waiter: %v %v", ok, wait)
	}
	// A cut and a pause to 5.5 s: 0.7 units a second after it. The first
	// waiter goes at 5.5 + 3/0.7 s; the others reach MaxWait at 10 s.
	r.onThrottled(sec(0.5), 0, 1, sec(5))
	var got []Waiter
	var at []time.Duration
	for now := sec(0.5); ; {
		if w, ok := r.Dequeue(now); ok {
			got, at = append(got, w), append(at, now)
			continue
		}
		var ok bool
		if now, ok = r.Next(now); !ok {
			break
		}
	}
	if len(got) != 3 || got[0].ID != w1 || !got[0].Granted || got[1].ID != w2 || got[1].Granted || got[2].Granted || at[1] != sec(10) || at[2] != sec(10) {
		t.Fatalf("left: %+v at %v", got, at)
	}
	if c := r.Counts(); c.TimedOut != 2 {
		t.Fatalf("timed out %d; want 2", c.TimedOut)
	}
}

// Cancelling a waiter takes nothing from the bucket: the one behind goes as
// if it had never been there.
func TestRateCancelLeavesNothing(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute, c.BurstTime = 60, headroom.Duration(time.Second) })
	take(r, 0, 1)
	a, _, _ := r.Enqueue(0, 1)
	b, _, _ := r.Enqueue(0, 1)
	if !r.Cancel(sec(0.5), a) || r.Cancel(sec(0.5), a) {
		t.Fatal("cancel")
	}
	if at, _ := r.Next(sec(0.5)); at != sec(1) {
		t.Fatalf("b leaves at %v, want 1s", at)
	}
	if w, ok := r.Dequeue(sec(1)); !ok || w.ID != b || !near(r.Tokens(sec(1)), 0) {
		t.Fatalf("dequeue %+v %v, tokens %v", w, ok, r.Tokens(sec(1)))
	}
	if r.Len() != 0 || r.qUnits != 0 {
		t.Fatal("queue not empty")
	}
}

// Success asks the controller only outside pauses, clamps to [min, max],
// and a returned rate (even the same one) restarts the increase clock and
// clears Waited.
func TestRateSuccessContract(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.RateController = fixed{success: 1e9} })
	r.waited = true
	r.onSuccess(sec(3), 0, 1)
	wantRate(t, r, 5625) // newTestRate's maximum
	if s := r.state(sec(4)); s.Waited || s.SinceLastIncrease != sec(1) {
		t.Fatalf("state %+v", s)
	}
	r = newTestRate(t, func(c *RateConfig) { c.RateController = fixed{success: 1200} })
	r.onSuccess(sec(3), 0, 1)
	if s := r.state(sec(3)); s.SinceLastIncrease != 0 || r.Counts().Increases != 1 {
		t.Fatalf("same rate did not restart the clock: %+v", s)
	}
}

func TestRateConfigProblemsListsEverything(t *testing.T) {
	c := RateConfig{
		MinUnitsPerMinute: -1, MaxUnitsPerMinute: math.NaN(), InitialUnitsPerMinute: math.Inf(1),
		BurstTime: -1, MaxWait: -1, Instances: -2, Controller: "cubic",
		Cubic: &Cubic{Beta: 2, ScaleConstant: -1}, AIMD: &AIMD{},
	}
	ps := problemsOf(c.Validate())
	var fields []string
	for _, p := range ps {
		fields = append(fields, p.Field)
	}
	want := "AIMD MinUnitsPerMinute MaxUnitsPerMinute InitialUnitsPerMinute BurstTime MaxWait Instances Cubic.Beta Cubic.ScaleConstant"
	if got := strings.Join(fields, " "); got != want {
		t.Fatalf("fields:\n got %s\nwant %s", got, want)
	}
	if _, err := NewRate(c, 0); err == nil || !strings.Contains(err.Error(), "Cubic.Beta") {
		t.Fatalf("NewRate: %v", err)
	}
	c = RateConfig{MinUnitsPerMinute: defaultMaxUnitsPerMinute + 1, MaxUnitsPerMinute: defaultMaxUnitsPerMinute}
	if ps := problemsOf(c.Validate()); len(ps) != 1 || ps[0].Field != "MinUnitsPerMinute" {
		t.Fatalf("min above max: %v", ps)
	}
	c = RateConfig{AIMD: &AIMD{DecreaseFactor: 1, IncreaseStep: -1, IncreaseInterval: -1}}
	if ps := problemsOf(c.Validate()); len(ps) != 3 {
		t.Fatalf("AIMD problems: %v", ps)
	}
	c = RateConfig{Controller: "vegas"}
	if ps := problemsOf(c.Validate()); len(ps) != 1 || ps[0].Field != "Controller" {
		t.Fatalf("an unknown controller: %v", ps)
	}
	c = RateConfig{Controller: "aimd", RateController: Cubic{}}
	if ps := problemsOf(c.Validate()); len(ps) != 1 || ps[0].Field != "Controller" {
		t.Fatalf("two controllers: %v", ps)
	}
}

// Every zero field of a RateConfig means its default, and the bounds set
// beside a default move it: a maximum below the default minimum lowers the
// minimum, an initial rate above the default maximum raises the maximum.
func TestRateConfigZeroMeansDefault(t *testing.T) {
	var zero RateConfig
	got, want := zero.settings(), DefaultRateConfig()
	if got.MinUnitsPerMinute != want.MinUnitsPerMinute || got.MaxUnitsPerMinute != want.MaxUnitsPerMinute ||
		got.InitialUnitsPerMinute != want.InitialUnitsPerMinute || got.Burst != time.Duration(want.BurstTime) ||
		got.MaxWait != time.Duration(want.MaxWait) || got.DecreaseCooldown != time.Duration(want.DecreaseCooldown) ||
		got.MaxPause != time.Duration(want.MaxPause) || got.Instances != 1 || got.PublishedLimitFraction != want.PublishedLimitFraction {
		t.Fatalf("the zero RateConfig runs on %+v; want the defaults %+v", got, want)
	}
	if _, ok := got.Controller.(AIMD); !ok {
		t.Fatalf("the zero RateConfig's controller is %T; want AIMD", got.Controller)
	}
	low := RateConfig{MaxUnitsPerMinute: 30}
	if s := low.settings(); s.MinUnitsPerMinute != 30 || s.InitialUnitsPerMinute != 30 || len(problemsOf(low.Validate())) != 0 {
		t.Fatalf("a maximum of 30 runs on min %v, initial %v (problems %v); want 30, 30, none", s.MinUnitsPerMinute, s.InitialUnitsPerMinute, problemsOf(low.Validate()))
	}
	high := RateConfig{InitialUnitsPerMinute: 1e6}
	if s := high.settings(); s.MaxUnitsPerMinute != 1e6 || len(problemsOf(high.Validate())) != 0 {
		t.Fatalf("an initial rate of 1e6 runs on max %v (problems %v); want 1e6, none", s.MaxUnitsPerMinute, problemsOf(high.Validate()))
	}
	off := RateConfig{DecreaseCooldown: -1, MaxPause: -1, Controller: "CUBIC"}
	if s := off.settings(); s.DecreaseCooldown != 0 || s.MaxPause != 0 {
		t.Fatalf("negative cooldown and pause run on %v, %v; want none", s.DecreaseCooldown, s.MaxPause)
	} else if _, ok := s.Controller.(Cubic); !ok {
		t.Fatalf(`Controller "CUBIC" runs %T; want Cubic`, s.Controller)
	}
}

// QuietSuccess is true only when a success could only be measured.
func TestRateQuietSuccess(t *testing.T) {
	r := newTestRate(t, nil)
	if !r.QuietSuccess() {
		t.Fatal("fresh AIMD limiter not quiet")
	}
	r.Enqueue(0, 1e6)
	if r.QuietSuccess() {
		t.Fatal("quiet with a waiter")
	}
	// A request refused and never queued (a shell without a queue) is
	// demand too: the controller rises on it.
	r = newTestRate(t, nil)
	for take(r, 0, 1) {
	}
	if r.QuietSuccess() {
		t.Fatal("quiet after a refusal")
	}
	r = newTestRate(t, func(c *RateConfig) { c.RateController = fixed{} })
	if r.QuietSuccess() {
		t.Fatal("custom controller quiet")
	}
	r = newTestRate(t, func(c *RateConfig) { c.RateController, c.Disabled = fixed{}, true })
	if !r.QuietSuccess() {
		t.Fatal("disabled not quiet")
	}
}

// Before its first cut a built-in controller doubles the rate every half
// second while requests wait, up to twice the measured send rate; the first
// throttle ends the slow start, cutting to 95% of the rate the dependency
// was accepting, but not below half the rate.
func TestRateSlowStart(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 600; c.RateController = Cubic{} }) // 10 a second
	// 10 a second accepted for a second: measured and accepted 600 a minute.
	for ms := 0; ms <= 1000; ms += 100 {
		now := time.Duration(ms) * time.Millisecond
		r.Enqueue(now, 1)
		r.onSuccess(now, now, 1)
		r.Cancel(now, r.nextID)
	}
	if !r.slowStart || r.Rate() <= 600 {
		t.Fatalf("rate %v, slow start %v: want a doubling while requests waited", r.Rate(), r.slowStart)
	}
	if r.Rate() > 2*r.MeasuredRate() {
		t.Fatalf("rate %v above twice the measured %v", r.Rate(), r.MeasuredRate())
	}
	before, accepted := r.Rate(), r.acceptedRate()
	r.onThrottled(sec(1.1), sec(1.05), 1, 0)
	if r.slowStart {
		t.Fatal("a throttle did not end the slow start")
	}
	want := min(before, max(0.95*accepted, before/2))
	wantRate(t, r, want)
	if s := r.state(sec(1.1)); s.SendRateAtLastDecrease != min(r.MeasuredRate(), r.acceptedRate()) {
		t.Fatalf("W from %v, want the accepted rate %v", s.SendRateAtLastDecrease, r.acceptedRate())
	}
	// After it, successes after waits follow the controller, not doublings.
	r.Enqueue(sec(1.7), 1)
	if r.onSuccess(sec(1.7), sec(1.6), 1); r.Rate() >= 2*want {
		t.Fatalf("doubled after the slow start: %v", r.Rate())
	}
}

// After the slow start a throttle cuts a rate just over the dependency's
// limit to 95% of what it was accepting, not by a third, and a rate far
// over it (most attempts refused) there too, by half at most; throttles
// with nothing accepted since the last cut (a server that refuses at any
// rate) do not cut again.
func TestRateCutToAcceptedRate(t *testing.T) {
	for _, tc := range []struct {
		name         string
		acceptedEach int // of every 10 responses, how many were successes
		want         func(rate, accepted float64) float64
	}{
		{"just over the limit", 9, func(rate, accepted float64) float64 { return max(0.7*rate, min(0.95*accepted, rate)) }},
		{"nothing accepted", 0, func(rate, accepted float64) float64 { return rate }},
		// Most refused (a deep bucket drained): to the accepted rate, below
		// the controller's proposal, but by half at most.
		{"most refused", 3, func(rate, accepted float64) float64 { return min(0.7*rate, max(0.95*accepted, rate/2)) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 1200; c.DecreaseCooldown = -1 }) // no cooldown
			r.onThrottled(0, 0, 1, 0)                                                                            // ends the slow start: 840
			for i := range 20 {
				now := sec(1 + float64(i)*0.05)
				if i%10 < tc.acceptedEach {
					r.onSuccess(now, now, 1)
				} else {
					r.onThrottled(now, 0, 1, 0) // sent before the cut: no cut
				}
			}
			rate, accepted := r.Rate(), r.acceptedRate()
			r.onThrottled(sec(1.96), sec(1.955), 1, 0) // in the last response's half second: measured as it was
			wantRate(t, r, tc.want(rate, accepted))
		})
	}
}
