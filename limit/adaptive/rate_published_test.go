package adaptive

import (
	"math"
	"testing"
	"time"
)

// greedy is a controller that always asks for far more than any maximum.
type greedy struct{}

func (greedy) OnThrottled(s RateState) float64       { return 1e12 }
func (greedy) OnSuccess(s RateState) (float64, bool) { return 1e12, true }

// SetPublishedLimit caps the whole budget at 0.98 × the published quota,
// shared by the instances, exactly.
func TestRatePublishedLimitCapsTheMaximum(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.Instances = 2 }) // 600 each
	if ch := r.SetPublishedLimit(sec(1), 1000); ch != ChangeRate {
		t.Fatalf("change %v, want ChangeRate", ch)
	}
	// M = min(5,625, 0.98 × 1,000) = 980 whole, 490 each; the rate was above.
	wantRate(t, r, 490)
	if s := r.State(sec(1)); s.MaxRate != 490 || s.MinRate != 30 || r.MaxRate() != 490 || r.PublishedLimit() != 1000 {
		t.Fatalf("state %+v, MaxRate %v, PublishedLimit %v", s, r.MaxRate(), r.PublishedLimit())
	}
	if r.Counts().Cuts != 0 {
		t.Fatal("a lower cap counted as a cut")
	}
	// The bucket follows the rate: 10 s of 490 a minute.
	if b := r.BucketSize(); !near(b, 490.0/6) {
		t.Fatalf("bucket %v, want %v", b, 490.0/6)
	}
	if ch := r.SetPublishedLimit(sec(2), 1000); ch != 0 {
		t.Fatalf("the same cap again: change %v", ch)
	}
}

// Every controller is held under the cap: the built-in ones read MaxRate,
// and the limiter clamps what any controller returns.
func TestRatePublishedLimitHoldsEveryController(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctl  RateController
	}{{"AIMD", AIMD{IncreaseStep: 6000}}, {"Cubic", Cubic{}}, {"custom", greedy{}}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRate(t, func(c *RateConfig) { c.Controller = tc.ctl; c.Instances = 2 })
			r.SetPublishedLimit(0, 1000) // 490 each
			r.OnThrottled(sec(1), 0, 1, 0)
			if r.Rate() > 490 {
				t.Fatalf("after a cut: %v", r.Rate())
			}
			// Many successes after waits, over minutes: never above 490.
			for i := range 200 {
				now := sec(2 + float64(i))
				r.Enqueue(now, 1e6, NoDeadline)
				r.OnSuccess(now, now, 10)
				if r.Rate() > 490 {
					t.Fatalf("second %d: rate %v above the cap 490", i, r.Rate())
				}
				r.Cancel(now, r.nextID)
			}
			if tc.name != "Cubic" { // CUBIC's climb is bounded by 2 × the measured rate
				wantRate(t, r, 490)
			}
		})
	}
}

// A cap change is an instance change's rescale: the shares are recomputed,
// the rate is kept and clamped; raising or removing the cap never raises
// the rate.
func TestRatePublishedLimitChanges(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.Instances = 2 })
	r.OnThrottled(sec(1), 0, 1, 0) // 420 each, 840 whole; before the cut 600
	cut := r.State(sec(1))
	r.SetPublishedLimit(sec(2), 3000)
	wantRate(t, r, 420) // under the cap of 1,470 each: unchanged
	r.SetPublishedLimit(sec(3), 600)
	wantRate(t, r, 294) // 0.98 × 600 / 2
	if s := r.State(sec(3)); s.RateBeforeLastDecrease != 600 || s.SendRateAtLastDecrease != cut.SendRateAtLastDecrease {
		t.Fatalf("the cut's figures changed: %+v", s)
	}
	// An instance joins: 588 whole, 196 each; the cap is shared too.
	r.SetInstances(sec(4), 3)
	wantRate(t, r, 196)
	if !near(r.MaxRate(), 196) {
		t.Fatalf("max %v", r.MaxRate())
	}
	// Raising the cap raises the maximum, not the rate.
	r.SetPublishedLimit(sec(5), 3000)
	wantRate(t, r, 196)
	if !near(r.MaxRate(), 980) {
		t.Fatalf("max %v, want 980", r.MaxRate())
	}
	// Removing it: the configured maximum again.
	if ch := r.SetPublishedLimit(sec(6), 0); ch != ChangeRate {
		t.Fatal("removing the cap reported no change")
	}
	if !near(r.MaxRate(), 1875) || r.PublishedLimit() != 0 {
		t.Fatalf("max %v, published %v", r.MaxRate(), r.PublishedLimit())
	}
	// Anything but a finite number above 0 removes the cap.
	for _, p := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		r.SetPublishedLimit(sec(7), 600)
		r.SetPublishedLimit(sec(7), p)
		if r.PublishedLimit() != 0 || !near(r.MaxRate(), 1875) {
			t.Fatalf("%v: published %v, max %v", p, r.PublishedLimit(), r.MaxRate())
		}
	}
	// A cap above the configured maximum changes nothing but the record.
	r.SetPublishedLimit(sec(8), 1e6)
	if !near(r.MaxRate(), 1875) {
		t.Fatalf("max %v", r.MaxRate())
	}
}

// The published quota wins over the minimum: a rate above it only meets
// throttles.
func TestRatePublishedLimitBelowTheMinimum(t *testing.T) {
	r := newTestRate(t, nil) // minimum 60
	r.SetPublishedLimit(0, 50)
	wantRate(t, r, 49)
	if s := r.State(0); s.MinRate != 49 || s.MaxRate != 49 {
		t.Fatalf("state %+v", s)
	}
	r.OnThrottled(sec(1), 0, 1, 0)
	wantRate(t, r, 49) // the floor is the cap
	r.SetPublishedLimit(sec(2), 0)
	if s := r.State(sec(2)); s.MinRate != 60 {
		t.Fatalf("minimum %v after the cap left, want 60", s.MinRate)
	}
	wantRate(t, r, 60)
}

// PublishedLimitFraction replaces 0.98; 0 means 0.98; outside (0, 1] is a
// problem.
func TestRatePublishedLimitFraction(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.PublishedLimitFraction = 0.5 })
	r.SetPublishedLimit(0, 1000)
	wantRate(t, r, 500)
	r = newTestRate(t, func(c *RateConfig) { c.PublishedLimitFraction = 0 })
	r.SetPublishedLimit(0, 1000)
	wantRate(t, r, 980)
	for _, f := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
		c := DefaultRateConfig()
		c.PublishedLimitFraction = f
		if ps := c.Problems(); len(ps) != 1 || ps[0].Field != "PublishedLimitFraction" {
			t.Errorf("%v: problems %v", f, ps)
		}
	}
	c := DefaultRateConfig()
	if c.PublishedLimitFraction != DefaultPublishedLimitFraction {
		t.Fatal("DefaultRateConfig lacks the fraction")
	}
	c.PublishedLimitFraction = 1
	if ps := c.Problems(); len(ps) != 0 {
		t.Fatal(ps)
	}
}

// A waiter's expected time follows a lower cap: the queue drains at the new
// rate, still in FIFO order.
func TestRatePublishedLimitSlowsTheQueue(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 600; c.Burst = time.Second }) // 10 a second, bucket 10
	if !r.Acquire(0, 10) {
		t.Fatal("first request not admitted")
	}
	r.Enqueue(0, 10, NoDeadline)
	if at, _ := r.Next(0); at != sec(1) {
		t.Fatalf("next %v, want 1s", at)
	}
	r.SetPublishedLimit(0, 300/0.98) // 300 a minute: 5 a second, bucket 5
	at, _ := r.Next(0)
	if at != sec(1) { // a request larger than the bucket waits for a full bucket: 5 units at 5 a second
		t.Fatalf("next %v, want 1s", at)
	}
	if w, ok := r.Dequeue(at); !ok || !w.Granted {
		t.Fatalf("dequeue at %v: %+v %v", at, w, ok)
	}
}
