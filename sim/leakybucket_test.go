package sim

import (
	"testing"
	"time"
)

// TestLeakyBucketWorkedExamples follows nginx's limit_req documentation
// ("burst", "nodelay", "delay=") through the module's arithmetic, with
// every request arriving at once.
func TestLeakyBucketWorkedExamples(t *testing.T) {
	type want struct {
		ok    bool
		delay time.Duration
	}
	ms := time.Millisecond
	for _, c := range []struct {
		name  string
		s     Server
		quota int // per second
		n     int
		want  []want
	}{
		// rate=1r/s burst=5: the first on schedule, the next five delayed
		// to one a second, the seventh refused.
		{"burst=5", Server{Burst: 5}, 1, 7, []want{
			{true, 0}, {true, 1000 * ms}, {true, 2000 * ms}, {true, 3000 * ms}, {true, 4000 * ms}, {true, 5000 * ms}, {false, 0}}},
		// nodelay: the same six served at once.
		{"burst=5 nodelay", Server{Burst: 5, NoDelay: true}, 1, 7, []want{
			{true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}, {false, 0}}},
		// rate=5r/s burst=12 delay=8: the one on schedule and the 8 of
		// delay= at once, the next 4 delayed 200 ms apart, the rest refused.
		{"burst=12 delay=8", Server{Burst: 12, Delay: 8}, 5, 16, []want{
			{true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0}, {true, 0},
			{true, 200 * ms}, {true, 400 * ms}, {true, 600 * ms}, {true, 800 * ms}, {false, 0}, {false, 0}, {false, 0}}},
		// burst=0, nginx's default: one request per 1/rate, nothing more.
		{"burst=0", Server{}, 10, 2, []want{{true, 0}, {false, 0}}},
	} {
		c.s.Kind, c.s.Window = kindLeakyBucket, time.Second
		a, err := newServerAPI(c.s, []quotaStep{{0, c.quota}})
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range c.want {
			r := a.handle(time.Second, 1)
			if (r.Status == 200) != w.ok || r.Delay != w.delay {
				t.Errorf("%s: request %d: %d delayed %v, want accepted %v delayed %v", c.name, i+1, r.Status, r.Delay, w.ok, w.delay)
			}
		}
	}

	// The excess leaks at the rate: rate=5r/s burst=12 delay=8, full at
	// 1 s (excess 12); a second later 5 have leaked: one more goes at
	// once (excess 8), the next is delayed 200 ms (excess 9), and four
	// more fill the burst.
	a, _ := newServerAPI(Server{Kind: kindLeakyBucket, Window: time.Second, Burst: 12, Delay: 8}, []quotaStep{{0, 5}})
	for range 13 {
		a.handle(time.Second, 1)
	}
	if r := a.handle(2*time.Second, 1); r.Status != 200 || r.Delay != 0 {
		t.Errorf("after a second: %d %v, want at once", r.Status, r.Delay)
	}
	if r := a.handle(2*time.Second, 1); r.Status != 200 || r.Delay != 200*ms {
		t.Errorf("then: %d %v, want 200 ms", r.Status, r.Delay)
	}
	if got := a.used(2 * time.Second); got != 9 {
		t.Errorf("excess %d, want 9", got)
	}
}

// TestLeakyBucketCountsWholeMilliseconds: nginx's clock is in whole
// milliseconds; 0.4 ms and 1000.3 ms are 1000 ms apart to it, 0.4 ms and
// 999.9 ms only 999.
func TestLeakyBucketCountsWholeMilliseconds(t *testing.T) {
	us := time.Microsecond
	a, _ := newServerAPI(Server{Kind: kindLeakyBucket, Window: time.Second}, []quotaStep{{0, 1}})
	a.handle(400*us, 1)
	if r := a.handle(999900*us, 1); r.Status != 429 || r.RetryAfter != time.Second {
		t.Errorf("999 ms later: %d %v, want 429 1s", r.Status, r.RetryAfter)
	}
	if r := a.handle(1000300*us, 1); r.Status != 200 {
		t.Errorf("1000 ms later: %d, want 200", r.Status)
	}
	// A rate nginx writes in r/m is truncated: 30r/m is 500 thousandths a
	// second, 7r/m 116 (not 116.67).
	if r := nginxRate(30, time.Minute); r != 500 {
		t.Errorf("30r/m = %d", r)
	}
	if r := nginxRate(7, time.Minute); r != 116 {
		t.Errorf("7r/m = %d", r)
	}
}

// TestLeakyBucketIsNginx: over random traffic, the model's decisions and
// delays are those of nginx's limit_req as its documentation and module
// describe them, recomputed here step by step; and so, after the first
// request of any run of accepted ones, the units accepted over an interval
// of d whole milliseconds never exceed burst + rate × d.
func TestLeakyBucketIsNginx(t *testing.T) {
	for _, s := range []Server{{Burst: 0}, {Burst: 4}, {Burst: 10, NoDelay: true}, {Burst: 10, Delay: 3}} {
		s.Kind, s.Window = kindLeakyBucket, 3*time.Second
		for seed := range uint64(20) {
			const quota = 20 // 6.666 units a second: nginx's rate 6666
			in := traffic(seed, 2*time.Minute, s.Window, 3)
			out := feed(t, s, []quotaStep{{0, quota}}, in)
			rate := int64(quota) * 1000 * 1000 / 3000 // thousandths a second, truncated
			var excess, last int64
			fresh := true
			type acc struct{ ms, units int64 }
			var accepted []acc
			for i, r := range in {
				ms := int64(r.at / time.Millisecond)
				ok, delay := true, int64(0)
				if fresh {
					fresh, excess, last = false, 0, ms
				} else {
					e := excess - rate*(ms-last)/1000 + 1000*int64(r.units)
					e = max(e, 0)
					ok = e <= 1000*int64(s.Burst)
					if ok {
						excess = e
						if ms != last {
							last = ms
						}
						switch {
						case s.NoDelay:
						case e > 1000*int64(s.Delay):
							delay = (e - 1000*int64(s.Delay)) * 1000 / rate
						}
					}
				}
				if got := out[i].Status == 200; got != ok || out[i].Delay != time.Duration(delay)*time.Millisecond {
					t.Fatalf("%+v seed %d: request %d (%d units at %v): accepted %v delayed %v, want %v %d ms",
						s, seed, i, r.units, r.at, got, out[i].Delay, ok, delay)
				}
				if ok {
					accepted = append(accepted, acc{ms, int64(r.units)})
				}
			}
			for i := range accepted {
				var n int64
				for j := i + 1; j < len(accepted); j++ {
					n += accepted[j].units
					if 1000*n > 1000*int64(s.Burst)+rate*(accepted[j].ms-accepted[i].ms)/1000 {
						t.Fatalf("%+v seed %d: %d units after the one at %d ms, by %d ms: more than burst + rate × t", s, seed, n, accepted[i].ms, accepted[j].ms)
					}
				}
			}
		}
	}
}

// TestLeakyBucketReset: the reset is when the excess has leaked away, or
// with UnitReset when one more unit would be taken; Remaining is the units
// that could arrive at once.
func TestLeakyBucketReset(t *testing.T) {
	for _, c := range []struct {
		unit        bool
		reset, left string
	}{{false, "3", "0"}, {true, "1", "0"}} {
		a, _ := newServerAPI(Server{Kind: kindLeakyBucket, Window: time.Second, Burst: 3, NoDelay: true, UnitReset: c.unit, Publish: publishDraft6}, []quotaStep{{0, 1}})
		a.publish = true
		var r response
		for range 4 {
			r = a.handle(0, 1)
		}
		if r.Status != 200 || r.Header.Get("RateLimit-Reset") != c.reset || r.Header.Get("RateLimit-Remaining") != c.left {
			t.Errorf("unit %v: %d %v, want reset %s", c.unit, r.Status, r.Header, c.reset)
		}
	}
}
