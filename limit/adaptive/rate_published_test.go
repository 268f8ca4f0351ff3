package adaptive

import (
	"math"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// greedy is a controller that always asks for far more than any maximum.
type greedy struct{}

func (greedy) OnThrottled(s RateState) float64       { return 1e12 }
func (greedy) OnSuccess(s RateState) (float64, bool) { return 1e12, true }

// A published quota sets the rate: this process's share of 0.98 × the
// quota, exactly, whatever the limiter had learned; the bucket holds a
// window of it.
func TestRatePublishedLimitSetsTheRate(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.Instances = 2 }) // 600 each
	if ch := r.SetPublishedLimit(sec(1), 1000, time.Minute); ch != ChangeRate {
		t.Fatalf("change %v, want ChangeRate", ch)
	}
	// M = 0.98 × 1,000 = 980 whole, 490 each.
	wantRate(t, r, 490)
	if s := r.state(sec(1)); s.MaxRate != 490 || s.MinRate != 30 || r.MaxRate() != 490 || r.PublishedLimit() != 1000 {
		t.Fatalf("state %+v, MaxRate %v, PublishedLimit %v", s, r.MaxRate(), r.PublishedLimit())
	}
	if r.Counts().Cuts != 0 {
		t.Fatal("a lower quota counted as a cut")
	}
	if b := r.size; !near(b, 490) {
		t.Fatalf("bucket %v, want a minute of the rate, 490", b)
	}
	if ch := r.SetPublishedLimit(sec(2), 1000, time.Minute); ch != 0 {
		t.Fatalf("the same quota again: change %v", ch)
	}
	// A higher quota raises the rate at once: published figures win over
	// what a cut taught.
	r.SetPublishedLimit(sec(3), 0, 0)
	r.onThrottled(sec(4), sec(3.5), 1, 0)
	r.SetPublishedLimit(sec(5), 3000, 10*time.Second)
	wantRate(t, r, 1470)
	if b := r.size; !near(b, 1470.0/6) {
		t.Fatalf("bucket %v, want Burst (10 s, longer than the window) of the rate", b)
	}
}

// While it follows a quota no controller moves the rate: throttles do not
// cut it (a pause still holds), successes after waits do not raise it.
func TestRatePublishedLimitHoldsEveryController(t *testing.T) {
	for _, tc := range []struct {
		name string
		ctl  RateController
	}{{"AIMD", AIMD{IncreaseStep: 6000}}, {"Cubic", Cubic{}}, {"custom", greedy{}}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRate(t, func(c *RateConfig) { c.RateController = tc.ctl; c.Instances = 2 })
			r.SetPublishedLimit(0, 1000, time.Minute) // 490 each
			if ch := r.onThrottled(sec(1), sec(0.5), 1, 2*time.Second); ch != ChangePause || r.Counts().Cuts != 0 {
				t.Fatalf("a throttle while following: change %v, cuts %d; want a pause and no cut", ch, r.Counts().Cuts)
			}
			for i := range 200 {
				now := sec(4 + float64(i))
				r.Enqueue(now, 1e6)
				r.onSuccess(now, now, 10)
				r.Cancel(now, r.nextID)
			}
			wantRate(t, r, 490)
		})
	}
}

// Taking the quota away keeps the rate, clamped into the configured range,
// and the bucket back at Burst; the limiter learns on from there.
func TestRatePublishedLimitTakenAway(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.Instances = 2 })
	r.SetPublishedLimit(sec(1), 600, time.Minute)
	wantRate(t, r, 294) // 0.98 × 600 / 2
	r.SetInstances(sec(2), 3)
	wantRate(t, r, 196) // the quota is shared too
	if ch := r.SetPublishedLimit(sec(3), 0, 0); ch != ChangeRate {
		t.Fatal("taking the quota away reported no change")
	}
	wantRate(t, r, 196)
	if !near(r.MaxRate(), r.cfg.MaxUnitsPerMinute/3) || r.PublishedLimit() != 0 {
		t.Fatalf("max %v, published %v", r.MaxRate(), r.PublishedLimit())
	}
	if b := r.size; !near(b, 196*r.cfg.Burst.Minutes()) {
		t.Fatalf("bucket %v, want Burst of the rate", b)
	}
	// Anything but a finite number above 0 takes it away.
	for _, p := range []float64{-1, math.NaN(), math.Inf(1), math.Inf(-1)} {
		r.SetPublishedLimit(sec(4), 600, time.Minute)
		r.SetPublishedLimit(sec(4), p, time.Minute)
		if r.PublishedLimit() != 0 {
			t.Fatalf("%v: published %v", p, r.PublishedLimit())
		}
	}
	// A quota above the configured maximum leaves the maximum.
	r.SetPublishedLimit(sec(5), 1e12, time.Minute)
	wantRate(t, r, r.cfg.MaxUnitsPerMinute/3)
}

// The published quota wins over the minimum: a rate above it only meets
// throttles.
func TestRatePublishedLimitBelowTheMinimum(t *testing.T) {
	r := newTestRate(t, nil) // minimum 60
	r.SetPublishedLimit(0, 50, time.Minute)
	wantRate(t, r, 49)
	if s := r.state(0); s.MinRate != 49 || s.MaxRate != 49 {
		t.Fatalf("state %+v", s)
	}
	r.SetPublishedLimit(sec(2), 0, 0)
	if s := r.state(sec(2)); s.MinRate != 60 {
		t.Fatalf("minimum %v after the quota left, want 60", s.MinRate)
	}
	wantRate(t, r, 60)
}

// PublishedLimitFraction replaces 0.98; 0 means 0.98; outside (0, 1] is a
// problem.
func TestRatePublishedLimitFraction(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.PublishedLimitFraction = 0.5 })
	r.SetPublishedLimit(0, 1000, time.Minute)
	wantRate(t, r, 500)
	r = newTestRate(t, func(c *RateConfig) { c.PublishedLimitFraction = 0 })
	r.SetPublishedLimit(0, 1000, time.Minute)
	wantRate(t, r, 980)
	for _, f := range []float64{-0.1, 1.01, math.NaN(), math.Inf(1)} {
		c := DefaultRateConfig()
		c.PublishedLimitFraction = f
		if ps := problemsOf(c.Validate()); len(ps) != 1 || ps[0].Field != "PublishedLimitFraction" {
			t.Errorf("%v: problems %v", f, ps)
		}
	}
	c := DefaultRateConfig()
	if c.PublishedLimitFraction != defaultPublishedLimitFraction {
		t.Fatal("DefaultRateConfig lacks the fraction")
	}
	c.PublishedLimitFraction = 1
	if ps := problemsOf(c.Validate()); len(ps) != 0 {
		t.Fatal(ps)
	}
}

// A waiter's expected time follows a lower quota: the queue drains at the
// new rate, still in FIFO order.
func TestRatePublishedLimitSlowsTheQueue(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) { c.InitialUnitsPerMinute = 600; c.BurstTime = headroom.Duration(time.Second) }) // 10 a second, bucket 10
	r.SetPublishedLimit(0, 600/0.98, 0)                                                                                      // the first quota fills the bucket; later ones do not
	if !take(r, 0, 10) {
		t.Fatal("first request not admitted")
	}
	r.Enqueue(0, 10)
	if at, _ := r.Next(0); at < sec(1) || at > sec(1)+time.Microsecond {
		t.Fatalf("next %v, want 1s", at)
	}
	r.SetPublishedLimit(0, 300/0.98, 0) // 300 a minute: 5 a second, bucket 5, not filled
	at, _ := r.Next(0)
	if at < sec(1) || at > sec(1)+time.Microsecond { // a request larger than the bucket waits for a full bucket: 5 units at 5 a second
		t.Fatalf("next %v, want 1s", at)
	}
	if w, ok := r.Dequeue(at); !ok || !w.Granted {
		t.Fatalf("dequeue at %v: %+v %v", at, w, ok)
	}
}
