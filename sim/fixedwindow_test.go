package sim

import (
	"testing"
	"time"
)

// TestFixedWindowIsExact: against a reference written from the rule — a
// window starts at a multiple of the window (aligned) or at the first
// request after the last window ended, and holds at most the quota — the
// model accepts exactly the requests that fit, so it never accepts more
// than the quota in a window and never refuses one that fits.
func TestFixedWindowIsExact(t *testing.T) {
	for _, aligned := range []bool{false, true} {
		for seed := range uint64(30) {
			const quota = 20
			w := 10 * time.Second
			in := traffic(seed, 5*time.Minute, w, 5)
			out := feed(t, Server{Kind: kindFixedWindow, Window: w, Aligned: aligned, Publish: publishDraft6}, []quotaStep{{0, quota}}, in)
			var start time.Duration
			count, open := 0, false
			for i, r := range in {
				if !open || r.at >= start+w {
					open, count, start = true, 0, r.at
					if aligned {
						start = r.at - r.at%w
					}
				}
				fits := count+r.units <= quota
				if fits {
					count += r.units
				}
				if got := out[i].Status == 200; got != fits {
					t.Fatalf("aligned %v seed %d: request %d (%d units at %v): accepted %v, want %v (window from %v holds %d)",
						aligned, seed, i, r.units, r.at, got, fits, start, count)
				}
				if count > quota {
					t.Fatalf("window from %v holds %d > %d", start, count, quota)
				}
			}
		}
	}
}

// TestFixedWindowResetIsTheWindowsEnd: the reset and a refusal's
// Retry-After both name the end of the window, rounded up to whole seconds.
func TestFixedWindowResetIsTheWindowsEnd(t *testing.T) {
	a, err := newServerAPI(Server{Kind: kindFixedWindow, Window: 10 * time.Second, Publish: publishDraft6}, []quotaStep{{0, 5}})
	if err != nil {
		t.Fatal(err)
	}
	a.publish = true
	// The window starts with the first request, at 1.3 s: it ends at 11.3 s.
	r := a.handle(1300*time.Millisecond, 4)
	if r.Status != 200 || r.Header.Get("RateLimit-Reset") != "10" || r.Header.Get("RateLimit-Remaining") != "1" {
		t.Fatalf("first: %d %v", r.Status, r.Header)
	}
	r = a.handle(4*time.Second, 2) // 4+2 > 5; 7.3 s left → 8
	if r.Status != 429 || r.RetryAfter != 8*time.Second || r.Header.Get("RateLimit-Reset") != "8" || r.Header.Get("Retry-After") != "8" {
		t.Fatalf("over: %d %v %v", r.Status, r.RetryAfter, r.Header)
	}
	if r := a.handle(11299*time.Millisecond, 1); r.Status != 200 { // the last unit of the window
		t.Fatalf("last unit: %d", r.Status)
	}
	if r := a.handle(11300*time.Millisecond, 5); r.Status != 200 || r.Header.Get("RateLimit-Reset") != "10" {
		t.Fatalf("next window: %d %v", r.Status, r.Header)
	}
	if got := a.used(21 * time.Second); got != 5 {
		t.Errorf("used at 21 s = %d, want 5", got)
	}
	if got := a.used(21300 * time.Millisecond); got != 0 {
		t.Errorf("used at 21.3 s = %d, want 0: the window ended", got)
	}

	// Aligned: the window is [0, 10 s) whatever the first request.
	b, _ := newServerAPI(Server{Kind: kindFixedWindow, Window: 10 * time.Second, Aligned: true, Publish: publishDraft6}, []quotaStep{{0, 5}})
	b.publish = true
	if r := b.handle(1300*time.Millisecond, 4); r.Header.Get("RateLimit-Reset") != "9" { // 8.7 s → 9
		t.Errorf("aligned: %v", r.Header)
	}
	if r := b.handle(9*time.Second, 6); r.Status != 429 || r.RetryAfter != 10*time.Second {
		t.Errorf("aligned, more than the quota: %d %v, want 429 and a window", r.Status, r.RetryAfter)
	}
}

// TestFixedWindowQuotaStep: a step takes effect at its time, within the
// window in progress.
func TestFixedWindowQuotaStep(t *testing.T) {
	a, _ := newServerAPI(Server{Kind: kindFixedWindow, Window: time.Minute, Aligned: true}, []quotaStep{{0, 10}, {30 * time.Second, 4}})
	a.handle(0, 5)
	if r := a.handle(31*time.Second, 1); r.Status != 429 || r.RetryAfter != 29*time.Second {
		t.Errorf("5 used under a quota of 4: %d %v, want 429 29s", r.Status, r.RetryAfter)
	}
	if r := a.handle(60*time.Second, 4); r.Status != 200 {
		t.Errorf("the next window: %d", r.Status)
	}
}
