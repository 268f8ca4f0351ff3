package sim

import (
	"math"
	"testing"
	"time"
)

// TestSlidingCounterIsExact checks the counter against go-chi/httprate's
// rule, recomputed from the accepted requests alone: a request at t,
// elapsed into its aligned window, is accepted exactly when
// round(previous window's units × (window − elapsed)/window + this
// window's units) + its units ≤ quota. Consequences, also checked: no
// aligned window takes more than the quota, and no interval of one window
// more than twice the quota.
func TestSlidingCounterIsExact(t *testing.T) {
	for seed := range uint64(30) {
		const quota = 20
		w := 10 * time.Second
		in := traffic(seed, 5*time.Minute, w, 5)
		out := feed(t, Server{Kind: kindSlidingCounter, Window: w, Publish: publishDraft6}, []quotaStep{{0, quota}}, in)
		perWindow := map[time.Duration]int{} // accepted units by window start
		var acc []arrival
		for i, r := range in {
			start := r.at - r.at%w
			est := float64(perWindow[start-w])*(float64(w)-float64(r.at-start))/float64(w) + float64(perWindow[start])
			fits := int(math.Round(est))+r.units <= quota
			if got := out[i].Status == 200; got != fits {
				t.Fatalf("seed %d: request %d (%d units at %v): accepted %v, want %v (estimate %.3f)", seed, i, r.units, r.at, got, fits, est)
			}
			if !fits {
				continue
			}
			perWindow[start] += r.units
			acc = append(acc, r)
			if perWindow[start] > quota {
				t.Fatalf("seed %d: window from %v holds %d > %d", seed, start, perWindow[start], quota)
			}
		}
		for _, a := range acc {
			n := 0
			for _, b := range acc {
				if b.at > a.at-w && b.at <= a.at {
					n += b.units
				}
			}
			if n > 2*quota {
				t.Fatalf("seed %d: the interval ending at %v holds %d > 2 × %d", seed, a.at, n, quota)
			}
		}
	}
}

// TestSlidingCounterResetIsTheWindowsEnd: the reset is the end of the
// current aligned window (httprate's X-RateLimit-Reset), and a refusal's
// Retry-After is when the previous window's weight has decayed enough.
func TestSlidingCounterResetIsTheWindowsEnd(t *testing.T) {
	a, _ := newServerAPI(Server{Kind: kindSlidingCounter, Window: 10 * time.Second, Publish: publishXRateLimit}, []quotaStep{{0, 10}})
	a.publish = true
	if r := a.handle(9*time.Second, 10); r.Status != 200 {
		t.Fatal(r.Status)
	}
	// At 12 s: 10 × 0.8 = 8 of the last window still count; 3 more would
	// make 11. They fit when 10 × (20 s − t)/10 s < 7.5: after 12.5 s.
	r := a.handle(12*time.Second, 3)
	if r.Status != 429 || r.RetryAfter != time.Second || r.Header.Get("X-RateLimit-Remaining") != "2" {
		t.Errorf("%d %v %v", r.Status, r.RetryAfter, r.Header)
	}
	if got, want := r.Header.Get("X-RateLimit-Reset"), "1767225620"; got != want { // 2026-01-01T00:00:20Z
		t.Errorf("reset %s, want %s: the end of the window [10 s, 20 s)", got, want)
	}
	if r := a.handle(12500*time.Millisecond, 3); r.Status != 429 {
		t.Errorf("at 12.5 s the estimate rounds to 8: %d", r.Status)
	}
	if r := a.handle(12501*time.Millisecond, 3); r.Status != 200 {
		t.Errorf("just after 12.5 s: %d", r.Status)
	}
	// A count that the current window alone cannot pass: it fits in the
	// next window, once this one's weight 9 × (20 s − t)/10 s is below 8.5,
	// after 10.56 s: 8.56 s from 2 s, written 9.
	b, _ := newServerAPI(Server{Kind: kindSlidingCounter, Window: 10 * time.Second}, []quotaStep{{0, 10}})
	b.handle(time.Second, 9)
	if r := b.handle(2*time.Second, 2); r.Status != 429 || r.RetryAfter != 9*time.Second {
		t.Errorf("next window: %d %v, want 429 9s", r.Status, r.RetryAfter)
	}
	if r := b.handle(10500*time.Millisecond, 2); r.Status != 429 {
		t.Errorf("at 10.5 s the estimate 8.55 rounds to 9: %d", r.Status)
	}
	if r := b.handle(11*time.Second, 2); r.Status != 200 {
		t.Errorf("at 11 s the estimate 8.1 rounds to 8: %d", r.Status)
	}
}
