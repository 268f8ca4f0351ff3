package sim

import (
	"fmt"
	"math"
	"testing"
	"time"
)

// idealRun runs the ideal mode through cfg: by default one instance with a
// demand of 6,000 units a minute, above any quota here, a steady quota and
// a run of 5 min.
func idealRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	if cfg.Scenario == "" {
		cfg.Scenario = scenarioSteady
	}
	if cfg.Instances == 0 {
		cfg.Instances = 1
	}
	if cfg.Demand == 0 {
		cfg.Demand = 6000
	}
	if cfg.Duration == 0 {
		cfg.Duration = 5 * time.Minute
	}
	cfg.NoSeries = true
	res, err := Run(cfg, idealMode())
	if err != nil {
		t.Fatal(err)
	}
	return res
}

var unitCosts = []Cost{{Units: 1, Weight: 1}}

// TestIdealIsNeverThrottled: the ideal client sends only what every
// arrival the latency allows would have accepted, through quota drops, a
// new instance, mixed costs and nginx's rounding.
func TestIdealIsNeverThrottled(t *testing.T) {
	servers := []Server{
		{Kind: kindFixedWindow, Window: time.Second},
		{Kind: kindFixedWindow, Window: 10 * time.Second, Aligned: true},
		{Kind: kindSlidingLog, Window: time.Second},
		{Kind: kindSlidingCounter, Window: time.Second},
		{Kind: kindTokenBucket, Window: time.Second, Burst: 5},
		{Kind: kindLeakyBucket, Window: time.Second},
		{Kind: kindLeakyBucket, Window: 10 * time.Second, Burst: 5, NoDelay: true},
		{Kind: kindLeakyBucket, Window: 3 * time.Second, Burst: 3, Delay: 1},
	}
	worlds := []Config{
		{Instances: 1, Costs: unitCosts},
		{Instances: 3, Scenario: scenarioDrop, DropAt: 40 * time.Second, DropFor: 20 * time.Second},
		{Instances: 2, Scenario: scenarioJoin, JoinAt: 40 * time.Second, Seed: 7},
	}
	for _, s := range servers {
		s.Publish = publishNone
		for _, w := range worlds {
			t.Run(fmt.Sprintf("%v/%d instances/%s", s, w.Instances, w.Scenario), func(t *testing.T) {
				t.Parallel()
				cfg := w
				cfg.Server, cfg.Duration = s, 90*time.Second
				// 50 units a second; 25 for the leaky bucket over 3 s, whose
				// drop to 37 units a window leaks at a rate nginx truncates.
				cfg.Quota = int(50 * s.Window / time.Second)
				if s.Window == 3*time.Second {
					cfg.Quota = 75
				}
				res := idealRun(t, cfg)
				if res.Throttled != 0 {
					t.Errorf("%d of %d requests sent got a 429", res.Throttled, res.Sent)
				}
				if res.AllowanceShare < 0.3 {
					t.Errorf("%.1f%% of the allowance: the ideal client should get far more", 100*res.AllowanceShare)
				}
			})
		}
	}
}

// roundTripMean is E[min(limit, RTT + add)] for a round trip RTT of two
// legs each uniform on [lat.Min, lat.Max], by the midpoint rule on its
// triangular density.
func roundTripMean(lat Latency, limit, add time.Duration) time.Duration {
	const n = 200000
	lo, hi := float64(2*lat.Min), float64(2*lat.Max)
	mode, width := (lo+hi)/2, (hi-lo)/2
	sum, mass := 0.0, 0.0
	for i := range n {
		x := lo + (float64(i)+0.5)*(hi-lo)/n
		f := 1 - math.Abs(x-mode)/width
		sum += f * math.Min(float64(limit), x+float64(add))
		mass += f
	}
	return time.Duration(sum / mass)
}

// TestIdealLeakyBucketWithoutBurst: nginx without a burst refuses a
// request that arrives sooner than its interval I after the last one
// accepted. The ideal client sends the next request once the last one is
// sure to be I behind it: Latency.Max − Latency.Min + I after the last was
// sent, or, once the last one's response is back at RTT, as soon as its
// arrival, at most a leg before the response, is I behind: RTT +
// max(0, I − 2·Latency.Min). Its share of the rate is I over the mean of
// the smaller of the two (docs/simulator.md).
func TestIdealLeakyBucketWithoutBurst(t *testing.T) {
	lat := Latency{Min: 20 * time.Millisecond, Max: 60 * time.Millisecond}
	for _, perSecond := range []int{50, 10} {
		interval := time.Second / time.Duration(perSecond)
		gap := roundTripMean(lat, lat.Max-lat.Min+interval, max(0, interval-2*lat.Min))
		want := float64(interval) / float64(gap)
		res := idealRun(t, Config{Quota: perSecond, Costs: unitCosts, Server: Server{Kind: kindLeakyBucket, Window: time.Second}})
		t.Logf("%d a second: mean gap %v, derived share %.2f%%, ideal %.2f%%", perSecond, gap, 100*want, 100*res.AllowanceShare)
		if math.Abs(res.AllowanceShare-want) > 0.005 || res.Throttled != 0 {
			t.Errorf("%d a second: %.2f%% of the allowance with %d 429s; derived %.2f%% with none",
				perSecond, 100*res.AllowanceShare, res.Throttled, 100*want)
		}
	}
}

// TestIdealSlidingLog: each unit is taken again once it has surely left
// the window: Window + min(jitter, RTT − 2·Latency.Min) after it was sent,
// which is Window + 5/6 of the jitter on average. The share is Window over
// that.
func TestIdealSlidingLog(t *testing.T) {
	lat := Latency{Min: 20 * time.Millisecond, Max: 60 * time.Millisecond}
	j := lat.Max - lat.Min
	for _, w := range []time.Duration{time.Second, 3 * time.Second} {
		reuse := w + roundTripMean(lat, j+2*lat.Min, 0) - 2*lat.Min
		want := float64(w) / float64(reuse)
		res := idealRun(t, Config{Quota: int(50 * w / time.Second), Costs: unitCosts, Server: Server{Kind: kindSlidingLog, Window: w}})
		t.Logf("%v: a unit back after %v, derived %.2f%%, ideal %.2f%%", w, reuse, 100*want, 100*res.AllowanceShare)
		if math.Abs(res.AllowanceShare-want) > 0.005 || res.Throttled != 0 {
			t.Errorf("%v: %.2f%% of the allowance with %d 429s; derived %.2f%% with none", w, 100*res.AllowanceShare, res.Throttled, 100*want)
		}
	}
}

// TestIdealAlignedFixedWindow: a window's quota sent a leg before the window
// starts all arrives in it, so the ideal client gets the whole allowance.
func TestIdealAlignedFixedWindow(t *testing.T) {
	for _, w := range []time.Duration{time.Second, 10 * time.Second} {
		res := idealRun(t, Config{Quota: int(50 * w / time.Second), Costs: unitCosts, Instances: 2,
			Server: Server{Kind: kindFixedWindow, Window: w, Aligned: true}})
		if float64(res.Accepted) != res.Allowance || res.Throttled != 0 {
			t.Errorf("%v: %d units accepted with %d 429s; want the allowance, %.0f, with none", w, res.Accepted, res.Throttled, res.Allowance)
		}
	}
}

// TestIdealFixedWindowFromTheFirstRequest: a cycle lasts Window + the
// jitter at most, so the ideal client gets at least a window's quota every
// Window + jitter, and never more than the allowance.
func TestIdealFixedWindowFromTheFirstRequest(t *testing.T) {
	lat := Latency{Min: 20 * time.Millisecond, Max: 60 * time.Millisecond}
	for _, w := range []time.Duration{time.Second, 10 * time.Second} {
		q := int(50 * w / time.Second)
		d := 5 * time.Minute
		res := idealRun(t, Config{Quota: q, Costs: unitCosts, Duration: d, Server: Server{Kind: kindFixedWindow, Window: w}})
		floor := float64(q) * math.Floor(float64(d-lat.Max)/float64(w+lat.Max-lat.Min))
		if float64(res.Accepted) < floor || float64(res.Accepted) > res.Allowance || res.Throttled != 0 {
			t.Errorf("%v: %d units accepted with %d 429s; want %.0f to %.0f with none", w, res.Accepted, res.Throttled, floor, res.Allowance)
		}
	}
}

// TestIdealTokenBucket: sent on a bucket as deep as the server's less what
// refills during the jitter, no request can be refused; the client loses
// that much once, and what is still on its way at the end.
func TestIdealTokenBucket(t *testing.T) {
	lat := Latency{Min: 20 * time.Millisecond, Max: 60 * time.Millisecond}
	for _, burst := range []int{0, 20} {
		res := idealRun(t, Config{Quota: 50, Costs: unitCosts, Server: Server{Kind: kindTokenBucket, Window: time.Second, Burst: burst}})
		lost := 50 * (lat.Max - lat.Min + lat.Max).Seconds()
		if float64(res.Accepted) < res.Allowance-lost-1 || res.Throttled != 0 {
			t.Errorf("burst %d: %d units accepted with %d 429s; want at least %.0f with none", burst, res.Accepted, res.Throttled, res.Allowance-lost-1)
		}
	}
}
