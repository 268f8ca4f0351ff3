package sim

import (
	"math/big"
	"testing"
	"time"
)

// TestTokenBucketIsExact checks the bucket against a reference in exact
// rational arithmetic (tokens start at the burst, refill at quota per
// window, capped at the burst; a request takes its units when the bucket
// holds them), and GCRA's bound: over any interval of length t, at most
// burst + rate × t units are accepted.
func TestTokenBucketIsExact(t *testing.T) {
	for _, burst := range []int{1, 7, 20} {
		for seed := range uint64(20) {
			const quota = 20
			w := 3 * time.Second // 20 units per 3 s: a unit every 150 ms, not a whole number of anything
			in := traffic(seed, 2*time.Minute, w, 5)
			out := feed(t, Server{Kind: kindTokenBucket, Window: w, Burst: burst, Publish: publishDraft6}, []quotaStep{{0, quota}}, in)
			rate := big.NewRat(quota, int64(w)) // units per ns
			tokens, last := big.NewRat(int64(burst), 1), time.Duration(0)
			var acc []arrival
			for i, r := range in {
				tokens.Add(tokens, new(big.Rat).Mul(rate, big.NewRat(int64(r.at-last), 1)))
				if tokens.Cmp(big.NewRat(int64(burst), 1)) > 0 {
					tokens.SetInt64(int64(burst))
				}
				last = r.at
				fits := tokens.Cmp(big.NewRat(int64(r.units), 1)) >= 0
				if fits {
					tokens.Sub(tokens, big.NewRat(int64(r.units), 1))
					acc = append(acc, r)
				}
				if got := out[i].Status == 200; got != fits {
					t.Fatalf("burst %d seed %d: request %d (%d units at %v): accepted %v, want %v (tokens %s)",
						burst, seed, i, r.units, r.at, got, fits, tokens.FloatString(3))
				}
			}
			for i := range acc {
				n := 0
				for j := i; j < len(acc); j++ {
					n += acc[j].units
					// n × window ≤ burst × window + quota × (t_j − t_i), in integers.
					if int64(n)*int64(w) > int64(burst)*int64(w)+quota*int64(acc[j].at-acc[i].at) {
						t.Fatalf("burst %d seed %d: %d units in [%v, %v]: more than burst + rate × t", burst, seed, n, acc[i].at, acc[j].at)
					}
				}
			}
		}
	}
}

// TestTokenBucketReset: the reset is when the bucket is full again, or with
// UnitReset when it holds one unit again; a request larger than the bucket
// never fits.
func TestTokenBucketReset(t *testing.T) {
	for _, c := range []struct {
		unit        bool
		reset, left string
	}{{false, "4", "0"}, {true, "1", "0"}} {
		// 10 units a 10 s window: a unit a second; a bucket of 4.
		a, _ := newServerAPI(Server{Kind: kindTokenBucket, Window: 10 * time.Second, Burst: 4, UnitReset: c.unit, Publish: publishDraft6}, []quotaStep{{0, 10}})
		a.publish = true
		r := a.handle(0, 4)
		if r.Status != 200 || r.Header.Get("RateLimit-Reset") != c.reset || r.Header.Get("RateLimit-Remaining") != c.left {
			t.Errorf("unit %v: %d %v, want reset %s", c.unit, r.Status, r.Header, c.reset)
		}
		if r := a.handle(1500*time.Millisecond, 2); r.Status != 429 || r.RetryAfter != time.Second { // 1.5 held, 2 at 2 s
			t.Errorf("unit %v: %d %v, want 429 1s", c.unit, r.Status, r.RetryAfter)
		}
		if r := a.handle(2*time.Second, 5); r.Status != 429 || r.RetryAfter != 10*time.Second {
			t.Errorf("unit %v: 5 units in a bucket of 4: %d %v, want 429 and a window", c.unit, r.Status, r.RetryAfter)
		}
		if r := a.handle(2*time.Second, 2); r.Status != 200 {
			t.Errorf("unit %v: %d", c.unit, r.Status)
		}
	}
	// A full bucket: draft-6 leaves the reset out, as express-rate-limit does
	// for 0.
	a, _ := newServerAPI(Server{Kind: kindTokenBucket, Window: time.Second, Burst: 10, Publish: publishDraft6}, []quotaStep{{0, 10}})
	a.publish = true
	a.handle(0, 1)
	if r := a.handle(time.Second, 0); r.Header.Get("RateLimit-Reset") != "" || r.Header.Get("RateLimit-Remaining") != "10" {
		t.Errorf("full: %v", r.Header)
	}
}

// TestTokenBucketQuotaStep: the bucket refills at the old rate until the
// step and at the new one after it; its depth stays.
func TestTokenBucketQuotaStep(t *testing.T) {
	a, _ := newServerAPI(Server{Kind: kindTokenBucket, Window: time.Second, Burst: 10}, []quotaStep{{0, 10}, {time.Second, 1}})
	a.handle(500*time.Millisecond, 10)
	// Empty at 0.5 s; 0.5 s at 10 a second, then 1 s at 1 a second: 6.
	if r := a.handle(2*time.Second, 7); r.Status != 429 {
		t.Errorf("7 units at 2 s: %d, want 429 (6 held)", r.Status)
	}
	if r := a.handle(2*time.Second, 6); r.Status != 200 {
		t.Errorf("6 units at 2 s: %d, want 200", r.Status)
	}
	if got := a.used(2 * time.Second); got != 10 {
		t.Errorf("used %d, want 10: the bucket is empty", got)
	}
}
