package sim

import (
	"testing"
	"time"
)

// TestSlidingLogIsExact: over random traffic, the units accepted in any
// window (t−window, t] never exceed the quota, and a request is refused
// only when the window ending at its arrival has no room for it — checked
// against the accepted requests themselves, not the model's state.
func TestSlidingLogIsExact(t *testing.T) {
	for seed := range uint64(30) {
		const quota = 20
		w := 10 * time.Second
		in := traffic(seed, 5*time.Minute, w, 5)
		out := feed(t, Server{Kind: kindSlidingLog, Window: w, Publish: publishDraft6}, []quotaStep{{0, quota}}, in)
		var acc []arrival
		inWindow := func(end time.Duration) int { // units accepted in (end−w, end]
			n := 0
			for _, a := range acc {
				if a.at > end-w && a.at <= end {
					n += a.units
				}
			}
			return n
		}
		for i, r := range in {
			fits := inWindow(r.at)+r.units <= quota
			if got := out[i].Status == 200; got != fits {
				t.Fatalf("seed %d: request %d (%d units at %v): accepted %v, want %v", seed, i, r.units, r.at, got, fits)
			}
			if fits {
				acc = append(acc, r)
			}
		}
		// Every window that ends at an arrival is the fullest one ending
		// near it: no window holds more than the quota.
		for _, a := range acc {
			if n := inWindow(a.at); n > quota {
				t.Fatalf("seed %d: the window ending at %v holds %d > %d", seed, a.at, n, quota)
			}
		}
	}
}

// TestSlidingLogResetIsWhenTheOldestUnitLeaves: draft-6's reset names the
// instant the oldest accepted unit leaves the window.
func TestSlidingLogResetIsWhenTheOldestUnitLeaves(t *testing.T) {
	a, _ := newServerAPI(Server{Kind: kindSlidingLog, Window: 10 * time.Second, Publish: publishDraft6}, []quotaStep{{0, 10}})
	a.publish = true
	a.handle(500*time.Millisecond, 3)
	r := a.handle(2*time.Second, 3)
	if r.Header.Get("RateLimit-Reset") != "9" || r.Header.Get("RateLimit-Remaining") != "4" { // 10.5 − 2 = 8.5 → 9
		t.Errorf("%v", r.Header)
	}
	r = a.handle(3*time.Second, 8) // needs the 3 of 0.5 s and the 3 of 2 s gone: 12 s
	if r.Status != 429 || r.RetryAfter != 9*time.Second || r.Header.Get("RateLimit-Reset") != "8" {
		t.Errorf("429: %d %v %v; want Retry-After 9 s, when 8 units fit, and reset 8 s, when the first 3 leave", r.Status, r.RetryAfter, r.Header)
	}
}
