package quota

import (
	"context"
	"errors"
	"math"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// sp builds SharePoint's draft-03 headers: remaining of limit, reset in
// whole seconds.
func sp(remaining, limit, resetSeconds int) http.Header {
	h := http.Header{}
	h.Set("RateLimit-Limit", strconv.Itoa(limit))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(resetSeconds))
	return h
}

func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// TryAcquireAt counts units: an attempt goes when the remaining less its
// cost stays at or above the reserve.
func TestTryAcquireAtCountsUnits(t *testing.T) {
	g := newGuard(t, Options{Name: "api"})
	g.Observe("h", Response{Status: 200, Header: xh(10, 100, time.Minute)}, t0) // reserve max(1, 2) = 2
	if d := admitN(g, "h", t0, 5); d != 0 {
		t.Fatalf("5 of 10: wait %v", d)
	}
	// 5 left: another 5 would leave 0, inside the reserve of 2.
	if d := admitN(g, "h", t0, 5); d != time.Minute {
		t.Fatalf("5 of 5: wait %v, want the reset (1m)", d)
	}
	if ok, d := g.TryAcquireAt("h", t0.Add(10*time.Second), 4); ok || d != 50*time.Second {
		t.Fatalf("4 of 5: %v, %v; want false, until the reset (50s)", ok, d)
	}
	if ok, d := g.TryAcquireAt("h", t0, 3); !ok || d != 0 { // 5 − 3 = 2: at the reserve, allowed
		t.Fatalf("3 of 5: %v, %v", ok, d)
	}
	if s, _ := g.State("h", t0); s.Remaining != 2 {
		t.Fatalf("remaining %d, want 2", s.Remaining)
	}
	// A cost below 1 counts as 1.
	g.Observe("z", Response{Status: 200, Header: xh(3, 100, time.Minute)}, t0)
	if d := admitN(g, "z", t0, 0); d != 0 {
		t.Fatal(d)
	}
	if d := admitN(g, "z", t0, -7); d == 0 {
		t.Fatal("a cost of -7 took nothing: 3 − 1 − 1 is inside the reserve")
	}
	if s, _ := g.State("z", t0); s.Remaining != 2 {
		t.Fatalf("remaining %d, want 2", s.Remaining)
	}
	// A cost of 1 takes one unit: 4 − 2 above the reserve lets two go.
	g.Observe("o", Response{Status: 200, Header: xh(4, 100, time.Minute)}, t0)
	first, second := admit(g, "o", t0), admit(g, "o", t0)
	if third := admit(g, "o", t0); first != 0 || second != 0 || third == 0 {
		t.Fatalf("three attempts of 1 unit waited %v, %v, %v; want 0, 0 and a wait: each takes one unit", first, second, third)
	}
}

// An attempt that could never fit goes once the remaining is above the
// reserve at all, and drives it below.
func TestTryAcquireOversized(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("h", Response{Status: 200, Header: xh(10, 10, time.Minute)}, t0) // reserve 1: 9 usable
	if d := admitN(g, "h", t0, 25); d != 0 {
		t.Fatalf("oversized: wait %v", d)
	}
	if s, _ := g.State("h", t0); s.Remaining != -15 {
		t.Fatalf("remaining %d, want −15", s.Remaining)
	}
	if d := admitN(g, "h", t0, 25); d != time.Minute {
		t.Fatalf("second oversized: wait %v, want the reset", d)
	}
	// 9 usable but only 5 left above the reserve: a cost of 9 fits the limit,
	// so it waits.
	g.Observe("k", Response{Status: 200, Header: xh(6, 10, time.Minute)}, t0)
	if d := admitN(g, "k", t0, 9); d != time.Minute {
		t.Fatalf("cost 9 with 5 above the reserve: wait %v", d)
	}
}

// A sliding window: after the published reset passes, one probe goes and
// the others wait for its figures, at most AssumedReset.
func TestProbeAfterResetSlidingWindow(t *testing.T) {
	g := newGuard(t, Options{}) // reserve of 100: max(1, 2) = 2
	g.Observe("sp", Response{Status: 429, Header: sp(0, 100, 1)}, t0)
	// (A 429 without Retry-After whose quota explains it: no backoff.)
	if d := admit(g, "sp", t0.Add(sec(0.5))); d != sec(0.5) {
		t.Fatalf("before the reset: wait %v, want 0.5s", d)
	}
	at := t0.Add(time.Second)
	if d := admitN(g, "sp", at, 5); d != 0 {
		t.Fatalf("the probe (cost 5) was held %v", d)
	}
	for i := range 10 {
		if d := admit(g, "sp", at.Add(sec(0.1*float64(i)))); d != time.Second-sec(0.1*float64(i)) {
			t.Fatalf("attempt %d behind the probe: wait %v", i, d)
		}
	}
	if s, _ := g.State("sp", at); !s.Probing || !s.Known {
		t.Fatalf("state %+v: want probing", s)
	}
	// A late answer for the window that is over (its reset already past)
	// does not end the probing.
	g.Observe("sp", Response{Status: 200, Header: sp(1, 100, 0)}, at.Add(sec(0.05)))
	if d := admit(g, "sp", at.Add(sec(0.05))); d == 0 {
		t.Fatal("an answer about the old window ended the probing")
	}
	// The probe's answer: a sliding window freed 7 units; its oldest unit
	// leaves in 1 s.
	ans := at.Add(sec(0.08))
	g.Observe("sp", Response{Status: 200, Header: sp(7, 100, 1)}, ans)
	n := 0
	for admit(g, "sp", ans) == 0 {
		n++
	}
	if n != 5 { // 7 − the reserve of 2
		t.Fatalf("after the probe's answer: %d admitted, want 5", n)
	}
	if s, _ := g.State("sp", ans); s.Probing || s.Remaining != 2 {
		t.Fatalf("state %+v", s)
	}
}

// Without an answer the probing is bounded: a new probe every AssumedReset.
func TestProbeUnansweredRepeats(t *testing.T) {
	g := newGuard(t, Options{AssumedReset: headroom.Duration(2 * time.Second)})
	g.Observe("h", Response{Status: 200, Header: xh(0, 100, 10*time.Second)}, t0)
	at := t0.Add(10 * time.Second)
	for i := range 3 {
		now := at.Add(time.Duration(i) * 2 * time.Second)
		if d := admit(g, "h", now); d != 0 {
			t.Fatalf("probe %d held %v", i, d)
		}
		if d := admit(g, "h", now.Add(sec(0.5))); d != sec(1.5) {
			t.Fatalf("after probe %d: wait %v, want 1.5s", i, d)
		}
	}
	// An error answer publishes nothing: still probing.
	g.Observe("h", Response{Status: 500}, at.Add(5*time.Second))
	if s, _ := g.State("h", at.Add(5*time.Second)); !s.Probing {
		t.Fatal("a 500 ended the probing")
	}
	// A 429 with Retry-After blocks, then a probe again.
	g.Observe("h", Response{Status: 429, Header: http.Header{"Retry-After": {"3"}}}, at.Add(5*time.Second))
	if d := admit(g, "h", at.Add(6*time.Second)); d != 2*time.Second {
		t.Fatalf("blocked: wait %v, want 2s", d)
	}
	if d := admit(g, "h", at.Add(8*time.Second)); d != 0 {
		t.Fatalf("the probe after the Retry-After held %v", d)
	}
	if d := admit(g, "h", at.Add(8*time.Second)); d != 2*time.Second {
		t.Fatalf("second after that probe: %v", d)
	}
}

// A fixed window pays one round trip per window: the probe's answer shows
// the window full again.
func TestProbeFixedWindow(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("gh", Response{Status: 200, Header: xh(2, 100, time.Minute)}, t0)
	at := t0.Add(time.Minute)
	if admit(g, "gh", at) != 0 || admit(g, "gh", at) == 0 {
		t.Fatal("want one probe")
	}
	g.Observe("gh", Response{Status: 200, Header: xh(99, 100, time.Minute)}, at.Add(sec(0.1)))
	n := 0
	for admit(g, "gh", at.Add(sec(0.1))) == 0 {
		n++
	}
	if n != 97 { // 99 − the reserve of 2
		t.Fatalf("%d admitted after the probe's answer, want 97", n)
	}
}

// SharePoint falls silent below 80% of its quota: a 2xx without quota
// headers after the held reset forgets the published figures.
func TestSilenceAfterResetForgets(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("sp", Response{Status: 200, Header: sp(0, 3000, 2)}, t0) // held until t0+2s
	if s, _ := g.State("sp", t0); s.PerMinute(time.Minute) != 3000 {
		t.Fatalf("PerMinute %v, want 3000", s.PerMinute(time.Minute))
	}
	// Before the reset a silent 2xx (another endpoint, an answer from an
	// earlier moment) changes nothing.
	g.Observe("sp", Response{Status: 200, Header: http.Header{"Content-Type": {"application/json"}}}, t0.Add(time.Second))
	if d := admit(g, "sp", t0.Add(time.Second)); d != time.Second {
		t.Fatalf("silence before the reset: wait %v, want 1s", d)
	}
	// After it, a silent 429 or 5xx is no 2xx: kept.
	g.Observe("sp", Response{Status: 500}, t0.Add(3*time.Second))
	if s, _ := g.State("sp", t0.Add(3*time.Second)); !s.Known {
		t.Fatal("a 500 forgot")
	}
	// A silent 2xx after the reset: forgotten, limit kept, admitted freely.
	now := t0.Add(3 * time.Second)
	g.Observe("sp", Response{Status: 204}, now)
	s, ok := g.State("sp", now)
	if !ok || s.Known || s.Limit != 3000 || s.Remaining != 0 || !s.Reset.IsZero() || s.Probing {
		t.Fatalf("state %+v %v: want forgotten, limit kept", s, ok)
	}
	if s.PerMinute(time.Minute) != 0 {
		t.Fatal("PerMinute of a state not known")
	}
	for i := range 1000 {
		if d := admitN(g, "sp", now, 5); d != 0 {
			t.Fatalf("attempt %d after the silence: wait %v", i, d)
		}
	}
	// Publishing again (80% reached): counted again.
	g.Observe("sp", Response{Status: 200, Header: sp(600, 3000, 1)}, now)
	if s, _ := g.State("sp", now); !s.Known || s.Remaining != 600 {
		t.Fatalf("state %+v", s)
	}
	// Probing after the reset, then a silent answer to the probe: forgotten.
	later := now.Add(2 * time.Second)
	if admit(g, "sp", later) != 0 {
		t.Fatal("probe held")
	}
	g.Observe("sp", Response{Status: 200}, later.Add(sec(0.1)))
	if d := admit(g, "sp", later.Add(sec(0.1))); d != 0 {
		t.Fatalf("after a silent answer to the probe: wait %v", d)
	}
}

// A server that publishes only near its limit has shown where it starts:
// silence after the reset says just more than the most it ever published
// remains, no more (a bucket of 20 under a limit of 50). Callers held
// while the figures stood do not all go at once: the units out reach that
// much, and each silent answer makes room again.
func TestSilenceAfterResetKeepsToThreshold(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("b", Response{Status: 200, Header: sp(10, 50, 1)}, t0)
	now := t0.Add(2 * time.Second)
	g.Observe("b", Response{Status: 200}, now)
	n := 0
	for admit(g, "b", now) == 0 {
		n++
		if n > 50 {
			break
		}
	}
	if n != 11 {
		t.Fatalf("%d admitted after the silence, want 11 (the most published, and one)", n)
	}
	g.Observe("b", Response{Status: 200}, now.Add(sec(0.05)))
	if d := admit(g, "b", now.Add(sec(0.05))); d != 0 {
		t.Fatalf("after another silent answer: wait %v", d)
	}
	// Answers that never come hold no one past the window the resets
	// showed (1 s).
	for admit(g, "b", now.Add(sec(0.05))) == 0 {
	}
	if d := admit(g, "b", now.Add(sec(1.05))); d != 0 {
		t.Fatalf("a window after the last silent answer: wait %v", d)
	}
	// A key that never published room forgets and admits freely.
	g.Observe("z", Response{Status: 200, Header: sp(0, 50, 1)}, t0)
	g.Observe("z", Response{Status: 200}, now)
	for i := range 100 {
		if d := admit(g, "z", now); d != 0 {
			t.Fatalf("attempt %d after the silence: wait %v", i, d)
		}
	}
}

// PerMinute uses the state's window, else the one given.
func TestStatePerMinute(t *testing.T) {
	for _, tc := range []struct {
		s    State
		w    time.Duration
		want float64
	}{
		{State{Known: true, Limit: 100, Window: 10 * time.Second}, time.Minute, 600},
		{State{Known: true, Limit: 3000}, time.Minute, 3000},
		{State{Known: true, Limit: 5000}, time.Hour, 5000.0 / 60},
		{State{Known: true, Limit: 3000}, 0, 0},
		{State{Known: false, Limit: 3000}, time.Minute, 0},
		{State{Known: true}, time.Minute, 0},
	} {
		if got := tc.s.PerMinute(tc.w); got != tc.want {
			t.Errorf("%+v over %v: %v, want %v", tc.s, tc.w, got, tc.want)
		}
	}
	g := newGuard(t, Options{})
	h := http.Header{"Ratelimit-Policy": {`"default";q=100;w=10`}, "Ratelimit": {`"default";r=50;t=5`}}
	g.Observe("ietf", Response{Status: 200, Header: h}, t0)
	if s, _ := g.State("ietf", t0); s.Window != 10*time.Second || s.PerMinute(time.Minute) != 600 {
		t.Fatalf("IETF policy: %+v, %v a minute", s, s.PerMinute(time.Minute))
	}
}

// A limit reads as a rate over the window the API documents when its
// headers publish none, and over the longest time to a reset a success has
// shown when the API has no single window (Discord's buckets); a refusal's
// reset, which may be a penalty, teaches nothing.
func TestStateWindowDocumentedOrLearned(t *testing.T) {
	for _, tc := range []struct {
		name string
		h    http.Header
		want float64 // units a minute, with no fallback window
	}{
		{"github core: an hour", http.Header{"X-Ratelimit-Limit": {"5000"}, "X-Ratelimit-Remaining": {"4000"},
			"X-Ratelimit-Reset": {epoch(40 * time.Minute)}, "X-Ratelimit-Resource": {"core"}}, 5000.0 / 60},
		{"github search: a minute", http.Header{"X-Ratelimit-Limit": {"30"}, "X-Ratelimit-Remaining": {"20"},
			"X-Ratelimit-Reset": {epoch(40 * time.Second)}, "X-Ratelimit-Resource": {"search"}}, 30},
		{"x: 15 minutes", http.Header{"X-Rate-Limit-Limit": {"900"}, "X-Rate-Limit-Remaining": {"800"},
			"X-Rate-Limit-Reset": {epoch(10 * time.Minute)}}, 60},
		{"shopify: 40 drain in 20 s", http.Header{"X-Shopify-Shop-Api-Call-Limit": {"1/40"}}, 120},
		{"discord: learned from reset-after", http.Header{"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"4"},
			"X-Ratelimit-Reset-After": {"1"}, "X-Ratelimit-Bucket": {"b"}}, 300},
	} {
		g := newGuard(t, Options{})
		g.Observe("k", Response{Status: 200, Header: tc.h}, t0)
		s, _ := g.State("k", t0)
		if got := s.PerMinute(0); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %v a minute (window %v), want %v", tc.name, got, s.Window, tc.want)
		}
	}

	g := newGuard(t, Options{})
	discord := func(remaining, resetAfter string) http.Header {
		return http.Header{"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {remaining},
			"X-Ratelimit-Reset-After": {resetAfter}, "X-Ratelimit-Bucket": {"b"}}
	}
	g.Observe("d", Response{Status: 200, Header: discord("2", "0.4")}, t0)
	if s, _ := g.State("d", t0); s.Window != 400*time.Millisecond {
		t.Fatalf("late in a window: learned %v, want 400ms", s.Window)
	}
	g.Observe("d", Response{Status: 200, Header: discord("4", "2")}, t0.Add(time.Second))
	g.Observe("d", Response{Status: 429, Header: discord("0", "600")}, t0.Add(2*time.Second))
	if s, _ := g.State("d", t0.Add(2*time.Second)); s.Window != 2*time.Second {
		t.Fatalf("after a success 2 s from its reset and a refusal 600 s from one: window %v, want 2s", s.Window)
	}

	// One host, two buckets: what was learned of one is not the other's,
	// and a documented window is not raised by another bucket's resets.
	g.Observe("d", Response{Status: 200, Header: http.Header{"X-Ratelimit-Limit": {"5"}, "X-Ratelimit-Remaining": {"4"},
		"X-Ratelimit-Reset-After": {"0.5"}, "X-Ratelimit-Bucket": {"other"}}}, t0.Add(3*time.Second))
	if s, _ := g.State("d", t0.Add(3*time.Second)); s.Window != 500*time.Millisecond {
		t.Fatalf("another Discord bucket: window %v, want its own 500ms", s.Window)
	}
	gh := func(limit, resource string, reset time.Duration) http.Header {
		return http.Header{"X-Ratelimit-Limit": {limit}, "X-Ratelimit-Remaining": {"20"},
			"X-Ratelimit-Reset": {epoch(reset)}, "X-Ratelimit-Resource": {resource}}
	}
	g.Observe("api.github.com", Response{Status: 200, Header: gh("5000", "core", 40*time.Minute)}, t0)
	g.Observe("api.github.com", Response{Status: 200, Header: gh("30", "search", 40*time.Second)}, t0)
	if s, _ := g.State("api.github.com", t0); s.PerMinute(0) != 30 {
		t.Fatalf("search after core on one host: %v a minute (window %v), want 30", s.PerMinute(0), s.Window)
	}
}

// With no limit published (IETF without a policy), a cost above what
// remains waits for the reset: nothing says it could never fit.
func TestTryAcquireWithoutLimitWaitsForRoom(t *testing.T) {
	g := newGuard(t, Options{})
	h := http.Header{"Ratelimit": {`"default";r=5;t=60`}}
	g.Observe("h", Response{Status: 200, Header: h}, t0)
	if d := admitN(g, "h", t0, 50); d != time.Minute {
		s, _ := g.State("h", t0)
		t.Fatalf("cost 50 with 5 remaining and no limit: wait %v (remaining now %d), want 1m", d, s.Remaining)
	}
	if d := admitN(g, "h", t0, 4); d != 0 {
		t.Fatalf("cost 4 with 5 remaining and a reserve of 1: wait %v", d)
	}
}

// A slot released twice frees one slot, not another holder's.
func TestSlotReleaseTwiceFreesOne(t *testing.T) {
	g := newGuard(t, Options{MaxInFlight: 2, QueueLimit: new(0)})
	contacted(t, g, "h")
	a, _ := g.Acquire(t.Context(), "h", 1)
	b, _ := g.Acquire(t.Context(), "h", 1)
	defer b.Release()
	a.Release()
	a.Release()
	held := 1
	for range 2 {
		if _, err := g.Acquire(t.Context(), "h", 1); err == nil {
			held++
		}
	}
	if held != 2 {
		t.Fatalf("%d in flight after a double release, MaxInFlight 2", held)
	}
}

// Acquire holds callers behind the probe: the probe goes at the reset, the
// next waiter AssumedReset later when no answer came.
func TestAcquireBehindTheProbe(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{})
		start := time.Now()
		g.Observe("h", Response{Status: 200, Header: xh(0, 100, 2*time.Second)}, start)
		var mu sync.Mutex
		var got []time.Duration
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				if _, err := g.Acquire(context.Background(), "h", 3); err != nil {
					t.Error(err)
				}
				mu.Lock()
				got = append(got, time.Since(start))
				mu.Unlock()
			})
		}
		wg.Wait()
		if len(got) != 2 || got[0] != 2*time.Second || got[1] != 3*time.Second {
			t.Fatalf("released at %v, want 2s (the probe) and 3s (no answer: a new probe)", got)
		}
		slot, err := g.Acquire(context.Background(), "h", 1)
		if err != nil || time.Since(start) != 4*time.Second {
			t.Fatalf("Acquire: %v at %v", err, time.Since(start))
		}
		slot.Release()
	})
}

// A deadline that ends a wait for an in-flight slot is the guard's refusal
// (ReasonDeadline) and still matches context.DeadlineExceeded; a
// cancellation is ctx.Err() as it is.
func TestSlotWaitEndedByDeadlineIsARefusal(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{MaxInFlight: 1})
		held, err := g.Acquire(context.Background(), "h", 1)
		if err != nil {
			t.Fatal(err)
		}
		defer held.Release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err = g.Acquire(ctx, "h", 1)
		var rl *limit.RateLimitedError
		if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("slot wait ended by its deadline: %v", err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		time.AfterFunc(time.Second, cancel)
		if _, err := g.Acquire(ctx, "h", 1); err != context.Canceled {
			t.Fatalf("slot wait cancelled: %v", err)
		}
	})
}

// A server that gives units back a few at a time (a sliding counter, a log
// spent at a steady pace) shows it in the probe's answer: from then on the
// key refills at the published rate, 100 a minute here, and attempts are
// paced by that refill instead of one probe per reset.
func TestGradualRefillAfterProbe(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("sp", Response{Status: 200, Header: sp(0, 100, 1)}, t0)
	at := t0.Add(time.Second)
	if d := admit(g, "sp", at); d != 0 {
		t.Fatalf("the probe was held %v", d)
	}
	g.Observe("sp", Response{Status: 200, Header: sp(3, 100, 1), Sent: at}, at)
	n := 0
	for admit(g, "sp", at) == 0 {
		n++
	}
	if n != 1 { // 3 − the reserve of 2
		t.Fatalf("%d admitted on the probe's answer, want 1", n)
	}
	// Next: a unit every 0.6 s, the refill of 100 a minute; not a probe a
	// second.
	now := at
	for i := range 5 {
		d := admit(g, "sp", now)
		if d <= 0 || d > 600*time.Millisecond {
			t.Fatalf("attempt %d: wait %v, want at most the 0.6s of one unit's refill", i, d)
		}
		now = now.Add(d)
		if d := admit(g, "sp", now); d != 0 {
			t.Fatalf("attempt %d after its wait: held %v", i, d)
		}
	}
	if s, _ := g.State("sp", now); s.Probing {
		t.Fatal("still probing")
	}
}

// An answer to an attempt sent before the probe is not the probe's answer:
// it neither ends the probing nor says how the server refills.
func TestAnswerSentBeforeProbeIgnored(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("h", Response{Status: 200, Header: xh(2, 100, time.Minute)}, t0)
	at := t0.Add(time.Minute)
	if admit(g, "h", at) != 0 {
		t.Fatal("the probe was held")
	}
	late := Response{Status: 200, Header: xh(0, 100, time.Second), Sent: at.Add(-time.Millisecond)}
	g.Observe("h", late, at.Add(sec(0.01)))
	if s, _ := g.State("h", at.Add(sec(0.01))); !s.Probing {
		t.Fatal("an answer sent before the probe ended the probing")
	}
	g.Observe("h", Response{Status: 200, Header: xh(99, 100, time.Minute), Sent: at}, at.Add(sec(0.02)))
	n := 0
	for admit(g, "h", at.Add(sec(0.02))) == 0 {
		n++
	}
	if n != 97 {
		t.Fatalf("%d admitted after the probe's answer, want 97: a fixed window", n)
	}
}

// Callers held behind the probe go as soon as its answer arrives, not when
// the probe's AssumedReset has passed.
func TestWaitWokenByProbeAnswer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{})
		start := time.Now()
		g.Observe("h", Response{Status: 200, Header: xh(0, 100, 2*time.Second)}, start)
		probe, err := g.Acquire(t.Context(), "h", 1)
		if err != nil || time.Since(start) != 2*time.Second {
			t.Fatalf("the probe: %v at %v", err, time.Since(start))
		}
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				if _, err := g.Acquire(t.Context(), "h", 1); err != nil {
					t.Error(err)
				}
				if d := time.Since(start); d != 2100*time.Millisecond {
					t.Errorf("a waiter went at %v, want 2.1s, when the answer came", d)
				}
			})
		}
		time.Sleep(100 * time.Millisecond)
		g.Observe("h", Response{Status: 200, Header: xh(90, 100, 10*time.Second), Sent: probe.Sent()}, time.Now())
		wg.Wait()
	})
}

// A figure that starts a count is taken less the units that went out after
// its attempt and are still unanswered: the server cannot have counted
// them. Within the window the count takes each attempt off as it goes, and
// a figure only lowers it.
func TestFigureLessWhatIsStillOut(t *testing.T) {
	g := newGuard(t, Options{ReserveFraction: new(0.0)})
	g.Observe("h", Response{Status: 200, Header: xh(0, 100, time.Minute)}, t0)
	at := t0.Add(time.Minute) // the reset: a probe, then attempts behind it
	if admit(g, "h", at) != 0 {
		t.Fatal("the probe was held")
	}
	probe := at
	// The probe's answer: 80 left; meanwhile nothing else went out.
	g.Observe("h", Response{Status: 200, Header: xh(80, 100, time.Minute), Sent: probe}, at.Add(time.Millisecond))
	var sent []time.Time
	for i := range 4 {
		s := at.Add(time.Duration(i+2) * time.Millisecond)
		if d := admitN(g, "h", s, 2); d != 0 {
			t.Fatalf("attempt %d held %v", i, d)
		}
		sent = append(sent, s)
	}
	if s, _ := g.State("h", sent[3]); s.Remaining != 72 {
		t.Fatalf("remaining %d, want 80 − 4×2 = 72", s.Remaining)
	}
	// The first of them is answered with 79: someone else spends too. The
	// count only goes down, to the figure.
	g.Observe("h", Response{Status: 200, Header: xh(70, 100, time.Minute), Sent: sent[0]}, sent[3].Add(time.Millisecond))
	if s, _ := g.State("h", sent[3]); s.Remaining != 70 {
		t.Fatalf("remaining %d, want the server's 70", s.Remaining)
	}
}
