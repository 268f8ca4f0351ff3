package quota

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

func newGuard(t *testing.T, o Options) *Guard {
	t.Helper()
	g, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// admit is TryAcquireAt of one unit as the wait it names: 0 when the
// attempt goes.
func admit(g *Guard, key string, now time.Time) time.Duration { return admitN(g, key, now, 1) }

// admitN is TryAcquireAt as the wait it names: 0 when the attempt goes, and
// -1, a wait no test expects, when the verdict and the wait disagree.
func admitN(g *Guard, key string, now time.Time, cost int) time.Duration {
	ok, d := g.TryAcquireAt(key, now, cost)
	if ok != (d == 0) {
		return -1
	}
	return d
}

// size is how many keys g holds.
func (g *Guard) size() int {
	n := 0
	g.keys.each(func(string, *entry) bool { n++; return true })
	return n
}

// xh builds X-RateLimit headers: remaining of limit, reset after d.
func xh(remaining, limit int, d time.Duration) http.Header {
	h := http.Header{}
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(remaining))
	if d > 0 {
		h.Set("X-RateLimit-Reset", strconv.FormatFloat(d.Seconds(), 'f', -1, 64))
	}
	return h
}

func TestReserveRule(t *testing.T) {
	g := newGuard(t, Options{Name: "api"})
	g.Observe("h", Response{Status: 200, Header: xh(5, 100, time.Minute)}, t0)
	// Reserve: max(1, 0.02 × 100) = 2. Three attempts go (5 → 2), the fourth waits.
	for i := range 3 {
		if ok, d := g.TryAcquireAt("h", t0, 1); !ok || d != 0 {
			t.Fatalf("attempt %d: %v, %v", i, ok, d)
		}
	}
	if ok, d := g.TryAcquireAt("h", t0.Add(10*time.Second), 1); ok || d != 50*time.Second {
		t.Fatalf("the fourth attempt: %v, %v; want false, until the reset (50s)", ok, d)
	}
	// At the reset the window is over: one probe, then its answer's figures.
	at := t0.Add(time.Minute)
	if d := admit(g, "h", at); d != 0 {
		t.Fatalf("the probe after the reset: wait %v", d)
	}
	if d := admit(g, "h", at); d != time.Second {
		t.Fatalf("second attempt after the reset: wait %v, want AssumedReset (1s) for the probe's answer", d)
	}
	g.Observe("h", Response{Status: 200, Header: xh(99, 100, time.Minute)}, at.Add(100*time.Millisecond))
	if d := admit(g, "h", at.Add(100*time.Millisecond)); d != 0 {
		t.Fatalf("after the probe's answer: wait %v", d)
	}
	if s, _ := g.State("h", at.Add(100*time.Millisecond)); s.Remaining != 98 || s.Probing {
		t.Fatalf("after the probe's answer: %+v, want 98 remaining, not probing", s)
	}
}

func TestReserveOptions(t *testing.T) {
	tests := []struct {
		name      string
		units     *int64
		fraction  *float64
		remaining int
		limit     int
		admitted  int
	}{
		{"defaults, small limit", nil, nil, 5, 10, 5},       // reserve 0: 2 % of 10, rounded down
		{"defaults, large limit", nil, nil, 300, 5000, 200}, // reserve 100
		{"units win", new(int64(7)), new(0.01), 10, 100, 3},
		{"fraction wins", new(int64(1)), new(0.5), 60, 100, 10},
		{"none", new(int64(0)), new(0.0), 3, 100, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := newGuard(t, Options{ReserveUnits: tc.units, ReserveFraction: tc.fraction})
			g.Observe("h", Response{Status: 200, Header: xh(tc.remaining, tc.limit, time.Minute)}, t0)
			n := 0
			for admit(g, "h", t0) == 0 {
				n++
				if n > tc.remaining {
					t.Fatal("admitted beyond remaining")
				}
			}
			if n != tc.admitted {
				t.Fatalf("admitted %d, want %d", n, tc.admitted)
			}
		})
	}
}

// The first attempt to a key goes alone: the others wait for its answer, at
// most AssumedReset. An answer that publishes nothing then lets everything
// through; a response for a key never asked about leaves no state.
func TestFirstContactGoesAlone(t *testing.T) {
	g := newGuard(t, Options{})
	if d := admit(g, "new", t0); d != 0 {
		t.Fatalf("the first attempt was held %v", d)
	}
	if d := admit(g, "new", t0.Add(sec(0.25))); d != sec(0.75) {
		t.Fatalf("the second before any answer: wait %v, want the rest of AssumedReset, 0.75s", d)
	}
	if d := admit(g, "new", t0.Add(time.Second)); d != 0 {
		t.Fatalf("no answer after AssumedReset: the next attempt held %v", d)
	}
	g.Observe("new", Response{Status: 200, Header: http.Header{"Content-Type": {"x"}}}, t0.Add(sec(1.1)))
	for i := range 100 {
		if d := admit(g, "new", t0.Add(sec(1.1))); d != 0 {
			t.Fatalf("attempt %d after an answer that publishes nothing: held %v", i, d)
		}
	}
	g.Observe("quiet", Response{Status: 200, Header: http.Header{"Content-Type": {"x"}}}, t0)
	if g.size() != 1 {
		t.Fatal("a response for a key never asked about left state")
	}
}

func TestCapOnWaits(t *testing.T) {
	g := newGuard(t, Options{MaxRetryAfter: headroom.Duration(time.Minute)})
	g.Observe("h", Response{Status: 200, Header: xh(0, 5000, 40*time.Minute)}, t0)
	if d := admit(g, "h", t0); d != time.Minute {
		t.Fatalf("wait = %v, want the 1m cap", d)
	}
	h := http.Header{"Retry-After": {"86400"}}
	g.Observe("r", Response{Status: 429, Header: h}, t0)
	if d := admit(g, "r", t0); d != time.Minute {
		t.Fatalf("Retry-After wait = %v, want the 1m cap", d)
	}
}

func TestTTL(t *testing.T) {
	g := newGuard(t, Options{TTL: headroom.Duration(time.Hour), MaxRetryAfter: headroom.Duration(3 * time.Hour)})
	g.Observe("h", Response{Status: 200, Header: xh(0, 100, 2*time.Hour)}, t0)
	if d := admit(g, "h", t0.Add(59*time.Minute)); d != 61*time.Minute {
		t.Fatalf("before the TTL: wait %v", d)
	}
	if d := admit(g, "h", t0.Add(61*time.Minute)); d != 0 {
		t.Fatalf("after the TTL the state is stale and the key is admitted; wait %v", d)
	}
	if s, ok := g.State("h", t0.Add(61*time.Minute)); !ok || s.Known {
		t.Fatalf("state %+v %v", s, ok)
	}
	// Observing another key a TTL later sweeps the idle entry.
	g.Observe("other", Response{Status: 200, Header: xh(10, 100, time.Minute)}, t0.Add(2*time.Hour))
	g.Observe("other", Response{Status: 200, Header: xh(9, 100, time.Minute)}, t0.Add(3*time.Hour+time.Second))
	if _, ok := g.State("h", t0.Add(3*time.Hour)); ok {
		t.Fatal("idle entry not swept")
	}
	if g.size() != 1 {
		t.Fatalf("size %d", g.size())
	}
}

func TestBackoffWithoutHints(t *testing.T) {
	g := newGuard(t, Options{})
	now := t0
	within := func(d, centre time.Duration) bool {
		return d >= centre*8/10 && d <= centre*12/10
	}
	for i, centre := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second} {
		g.Observe("h", Response{Status: 429}, now)
		d := admit(g, "h", now)
		if !within(d, centre) {
			t.Fatalf("throttle %d: wait %v, want %v ± 20%%", i+1, d, centre)
		}
		now = now.Add(d)
		if d := admit(g, "h", now); d != 0 {
			t.Fatalf("throttle %d: still blocked after the wait (%v)", i+1, d)
		}
	}
	g.Observe("h", Response{Status: 200}, now) // a success resets the curve
	g.Observe("h", Response{Status: 503}, now)
	if d := admit(g, "h", now); !within(d, time.Second) {
		t.Fatalf("after a success: wait %v, want 1s ± 20%%", d)
	}
	// Other keys have their own curve.
	g.Observe("k", Response{Status: 429}, now)
	if d := admit(g, "k", now); !within(d, time.Second) {
		t.Fatalf("other key: %v", d)
	}
}

func TestBackoffCappedAtMax(t *testing.T) {
	g := newGuard(t, Options{Backoff: headroom.Backoff{Initial: headroom.Duration(time.Second), Max: headroom.Duration(4 * time.Second), Jitter: new(0.0)}})
	var d time.Duration
	now := t0
	for range 10 {
		now = now.Add(d)
		g.Observe("h", Response{Status: 429}, now)
		d = admit(g, "h", now)
	}
	if d < 3900*time.Millisecond || d > 4100*time.Millisecond {
		t.Fatalf("wait %v, want about the 4s max", d)
	}
}

// The backoff's jitter comes from Options.Seed: one seed draws the same
// waits, within ±Jitter of the curve; another draws others.
func TestBackoffJitterFollowsTheSeed(t *testing.T) {
	waits := func(seed uint64) []time.Duration {
		g := newGuard(t, Options{Seed: seed})
		var got []time.Duration
		now := t0
		for range 5 {
			g.Observe("h", Response{Status: 429}, now)
			d := admit(g, "h", now)
			got = append(got, d)
			now = now.Add(d)
		}
		return got
	}
	a, b, c := waits(7), waits(7), waits(8)
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("seed 7 twice (-first +second):\n%s", diff)
	}
	if cmp.Equal(a, c) {
		t.Fatalf("seeds 7 and 8 drew the same waits %v", a)
	}
	for i, d := range a {
		curve := time.Second << i
		if lo, hi := time.Duration(0.8*float64(curve)), time.Duration(1.2*float64(curve)); d < lo || d > hi {
			t.Errorf("wait %d = %v, want within [%v, %v]", i, d, lo, hi)
		}
	}
}

// Ten requests in flight together, throttled together without a hint, are
// one signal: a blip of concurrent 503s backs the key off one step, not
// ten, and the next throttle after the block is the next step.
func TestConcurrentThrottlesAreOneStep(t *testing.T) {
	g := newGuard(t, Options{})
	for i := range 10 {
		g.Observe("h", Response{Status: 503}, t0.Add(time.Duration(i)*10*time.Millisecond))
	}
	d := admit(g, "h", t0.Add(100*time.Millisecond))
	if d <= 0 || d > 1200*time.Millisecond {
		t.Fatalf("after 10 concurrent 503s: wait %v, want at most the first step, 1s ± 20%%", d)
	}
	after := t0.Add(100*time.Millisecond + d)
	g.Observe("h", Response{Status: 503}, after)
	if d := admit(g, "h", after); d < 1600*time.Millisecond || d > 2400*time.Millisecond {
		t.Fatalf("a throttle after the block: wait %v, want the second step, 2s ± 20%%", d)
	}
}

func TestThrottleExplainedByQuota(t *testing.T) {
	g := newGuard(t, Options{})
	// GitHub primary limit: 403/429 with remaining 0 and a reset: wait for
	// the reset, no backoff on top.
	g.Observe("h", Response{Status: 429, Header: xh(0, 60, 30*time.Second)}, t0)
	if d := admit(g, "h", t0); d != 30*time.Second {
		t.Fatalf("wait %v", d)
	}
	if d := admit(g, "h", t0.Add(30*time.Second)); d != 0 {
		t.Fatalf("after reset: %v", d)
	}
	// Secondary limit: 429 with allowance left and no Retry-After → backoff.
	g.Observe("s", Response{Status: 429, Header: xh(4000, 5000, 30*time.Minute)}, t0)
	if d := admit(g, "s", t0); d < 800*time.Millisecond || d > 1200*time.Millisecond {
		t.Fatalf("secondary limit wait %v", d)
	}
}

func TestRetryAfterWinsOverReset(t *testing.T) {
	g := newGuard(t, Options{})
	h := xh(0, 100, time.Minute)
	h.Set("Retry-After", "10")
	g.Observe("h", Response{Status: 429, Header: h}, t0)
	if d := admit(g, "h", t0); d != 10*time.Second {
		t.Fatalf("wait %v, want the Retry-After", d)
	}
	if d := admit(g, "h", t0.Add(10*time.Second)); d != 0 {
		t.Fatalf("after Retry-After: %v", d)
	}
	// A Retry-After alone (no quota headers) blocks too, and then lets go.
	g.Observe("r", Response{Status: 503, Header: http.Header{"Retry-After": {"3"}}}, t0)
	if d := admit(g, "r", t0.Add(time.Second)); d != 2*time.Second {
		t.Fatalf("wait %v", d)
	}
	if d := admit(g, "r", t0.Add(3*time.Second)); d != 0 {
		t.Fatalf("after: %v", d)
	}
}

func TestResponseCorrections(t *testing.T) {
	g := newGuard(t, Options{ReserveUnits: new(int64(0)), ReserveFraction: new(0.0)})
	g.Observe("h", Response{Status: 200, Header: xh(10, 100, time.Minute)}, t0)
	for range 4 {
		admit(g, "h", t0) // 10 → 6
	}
	remaining := func() int64 { s, _ := g.State("h", t0); return s.Remaining }
	// A late response from the same window says 8: the guard's 6 stands.
	g.Observe("h", Response{Status: 200, Header: xh(8, 100, time.Minute)}, t0)
	if r := remaining(); r != 6 {
		t.Fatalf("same window, higher figure: %d", r)
	}
	// Someone else spends: the server says 3.
	g.Observe("h", Response{Status: 200, Header: xh(3, 100, time.Minute)}, t0)
	if r := remaining(); r != 3 {
		t.Fatalf("same window, lower figure: %d", r)
	}
	// A new window.
	g.Observe("h", Response{Status: 200, Header: xh(99, 100, 2*time.Minute)}, t0)
	if r := remaining(); r != 99 {
		t.Fatalf("new window: %d", r)
	}
	// A straggler from the old window is ignored.
	g.Observe("h", Response{Status: 200, Header: xh(1, 100, time.Minute)}, t0)
	if r := remaining(); r != 99 {
		t.Fatalf("old window: %d", r)
	}
}

// TestOptimisticDecrement: callers racing for the last units cannot all
// spend them.
func TestOptimisticDecrement(t *testing.T) {
	g := newGuard(t, Options{})
	g.Observe("h", Response{Status: 200, Header: xh(52, 100, time.Minute)}, t0) // reserve 2: 50 to spend
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 100 {
				if ok, _ := g.TryAcquireAt("h", t0, 1); ok {
					admitted.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if n := admitted.Load(); n != 50 {
		t.Fatalf("admitted %d, want 50", n)
	}
}

func TestShopifyAssumedReset(t *testing.T) {
	g := newGuard(t, Options{ReserveUnits: new(int64(1))})
	h := http.Header{"X-Shopify-Shop-Api-Call-Limit": {"39/40"}} // reserve max(1, 0.8) = 1
	g.Observe("s", Response{Status: 200, Header: h}, t0)
	if d := admit(g, "s", t0); d != time.Second {
		t.Fatalf("no published reset: hold %v, want AssumedReset", d)
	}
	// After it, one probe.
	now := t0.Add(time.Second)
	if d := admit(g, "s", now); d != 0 {
		t.Fatalf("probe refused: %v", d)
	}
	if d := admit(g, "s", now); d != time.Second {
		t.Fatalf("second after the probe: %v", d)
	}
	// The probe's response says the bucket drained 9 units in a second: it
	// leaks, so from now on the key refills at the documented 40 in 20 s.
	g.Observe("s", Response{Status: 200, Header: http.Header{"X-Shopify-Shop-Api-Call-Limit": {"30/40"}}}, now)
	if d := admit(g, "s", now); d != 0 {
		t.Fatalf("after drain: %v", d)
	}
	// A 429 with Retry-After 2.0 holds: the bucket is full until then, and
	// leaks from then on, 2 units a second: the reserve's unit and the
	// attempt's after 1 s, then one every 0.5 s.
	h429 := http.Header{"X-Shopify-Shop-Api-Call-Limit": {"40/40"}, "Retry-After": {"2.0"}}
	g.Observe("s", Response{Status: 429, Header: h429}, now)
	if d := admit(g, "s", now); d != 2*time.Second {
		t.Fatalf("429: %v", d)
	}
	now = now.Add(2 * time.Second)
	for i, want := range []time.Duration{time.Second, 500 * time.Millisecond, 500 * time.Millisecond} {
		d := admit(g, "s", now)
		if d != want {
			t.Fatalf("attempt %d after the Retry-After: wait %v, want %v", i, d, want)
		}
		now = now.Add(d)
		if d := admit(g, "s", now); d != 0 {
			t.Fatalf("attempt %d held %v after its wait", i, d)
		}
	}
}

func TestShareByHint(t *testing.T) {
	byHint := func(key, hint string) string { return "hint:" + hint }
	g := newGuard(t, Options{Share: byHint, ReserveUnits: new(int64(1))})
	h := http.Header{}
	h.Set("X-RateLimit-Limit", "5")
	h.Set("X-RateLimit-Remaining", "2")
	h.Set("X-RateLimit-Reset-After", "3.5")
	h.Set("X-RateLimit-Bucket", "abcd1234")
	g.Observe("POST /channels/1/messages", Response{Status: 200, Header: h}, t0)
	g.Observe("PATCH /channels/1/messages", Response{Status: 200, Header: h}, t0)
	// Both routes spend one bucket: 2 left, reserve 1 → one attempt.
	if d := admit(g, "POST /channels/1/messages", t0); d != 0 {
		t.Fatal(d)
	}
	if d := admit(g, "PATCH /channels/1/messages", t0); d != 3500*time.Millisecond {
		t.Fatalf("shared bucket: %v", d)
	}
}

// contacted makes key known to g at time.Now as a server that publishes
// nothing: the first attempt goes, its answer lets every attempt through.
func contacted(t *testing.T, g *Guard, key string) {
	t.Helper()
	if ok, d := g.TryAcquireAt(key, time.Now(), 1); !ok {
		t.Fatalf("the first attempt to %s was held %v", key, d)
	}
	g.Observe(key, Response{Status: 200}, time.Now())
}

func TestInFlightCap(t *testing.T) {
	g := newGuard(t, Options{MaxInFlight: 2, QueueLimit: new(0)})
	contacted(t, g, "h")
	contacted(t, g, "other")
	ctx := t.Context()
	a, err := g.Acquire(ctx, "h", 1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := g.Acquire(ctx, "h", 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = g.Acquire(ctx, "h", 1)
	want := &limit.RateLimitedError{Limiter: "quota", Reason: telemetry.ReasonNoPermit}
	if diff := cmp.Diff(want, err); diff != "" || !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("third (-want +got):\n%s", diff)
	}
	if _, err := g.Acquire(ctx, "other", 1); err != nil {
		t.Fatalf("other key: %v", err)
	}
	if s, _ := g.State("h", t0); s.InFlight != 2 {
		t.Fatalf("in flight %d", s.InFlight)
	}
	a.Release()
	a.Release() // harmless
	if _, err := g.Acquire(ctx, "h", 1); err != nil {
		t.Fatal(err)
	}
	b.Release()
	var zero Slot
	zero.Release()
	// Without a cap, slots are free.
	free := newGuard(t, Options{QueueLimit: new(0)})
	contacted(t, free, "h")
	for range 1000 {
		if _, err := free.Acquire(ctx, "h", 1); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{})
		start := time.Now()
		g.Observe("h", Response{Status: 200, Header: xh(0, 10, 30*time.Second)}, start)
		if _, err := g.Acquire(t.Context(), "h", 1); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(start); got != 30*time.Second {
			t.Fatalf("waited %v, want 30s", got)
		}
	})
}

func TestWaitRefusals(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{MaxWait: headroom.Duration(20 * time.Second)})
		now := time.Now()
		g.Observe("h", Response{Status: 200, Header: xh(0, 10, 15*time.Second)}, now)
		g.Observe("long", Response{Status: 200, Header: xh(0, 10, time.Minute)}, now)

		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
		defer cancel()
		var rl *limit.RateLimitedError
		if _, err := g.Acquire(ctx, "h", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline {
			t.Fatalf("deadline: %v", err)
		}
		if _, err := g.Acquire(t.Context(), "long", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonMaxWait || rl.RetryAfter != time.Minute {
			t.Fatalf("max wait: %v", err)
		}
		if time.Since(now) != 0 {
			t.Fatal("a refusal waited")
		}
		// Cancelled mid-wait: ctx.Err().
		ctx2, cancel2 := context.WithCancel(t.Context())
		go func() {
			time.Sleep(5 * time.Second)
			cancel2()
		}()
		if _, err := g.Acquire(ctx2, "h", 1); !errors.Is(err, context.Canceled) {
			t.Fatalf("cancel: %v", err)
		}
		if time.Since(now) != 5*time.Second {
			t.Fatalf("cancelled after %v", time.Since(now))
		}
	})
}

func TestAcquireWaitsForSlotThenQuota(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{MaxInFlight: 1})
		s1, err := g.Acquire(t.Context(), "h", 1)
		if err != nil {
			t.Fatal(err)
		}
		done := make(chan time.Duration)
		start := time.Now()
		go func() {
			s2, err := g.Acquire(t.Context(), "h", 1)
			if err != nil {
				t.Error(err)
			}
			s2.Release()
			done <- time.Since(start)
		}()
		time.Sleep(2 * time.Second)
		// The first response publishes an exhausted quota for 3 s more.
		g.Observe("h", Response{Status: 200, Header: xh(0, 10, 3*time.Second)}, time.Now())
		s1.Release()
		if got := <-done; got != 5*time.Second {
			t.Fatalf("second attempt went after %v, want 5s (slot at 2s, reset at 5s)", got)
		}
		// Cancelled while waiting for a slot: ctx.Err(), no slot held.
		g.Observe("h", Response{Status: 200, Header: xh(90, 100, 10*time.Second)}, time.Now())
		s3, err := g.Acquire(t.Context(), "h", 1)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		if _, err := g.Acquire(ctx, "h", 1); !errors.Is(err, context.Canceled) {
			t.Fatal(err)
		}
		s3.Release()
		if s, _ := g.State("h", time.Now()); s.InFlight != 0 {
			t.Fatalf("slot leaked: %d", s.InFlight)
		}
	})
}

// With RefuseAtOnce, Acquire refuses an attempt the quota has no room for
// at once, with the wait until the reset, and releases the slot it took.
func TestAcquireRefusesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{Name: "api", MaxInFlight: 1, QueueLimit: new(0)})
		g.Observe("h", Response{Status: 200, Header: xh(0, 10, time.Minute)}, time.Now())
		_, err := g.Acquire(t.Context(), "h", 1)
		want := &limit.RateLimitedError{Limiter: "api", RetryAfter: time.Minute, Reason: telemetry.ReasonNoPermit}
		if diff := cmp.Diff(want, err); diff != "" || !errors.Is(err, limit.ErrRateLimited) {
			t.Fatalf("refusal (-want +got):\n%s", diff)
		}
		// The refused attempt released its slot.
		if s, _ := g.State("h", time.Now()); s.InFlight != 0 {
			t.Fatalf("slot leaked: %d", s.InFlight)
		}
	})
}

func TestKey(t *testing.T) {
	g := newGuard(t, Options{})
	req, _ := http.NewRequest("GET", "https://api.github.com:443/repos", nil)
	if k := g.Key(req); k != "api.github.com:443" {
		t.Fatal(k)
	}
	if k := g.Key(&http.Request{Host: "h.test:8080"}); k != "h.test:8080" {
		t.Fatalf("a request without a URL: key %q, want its Host", k)
	}
	custom := newGuard(t, Options{Key: func(r *http.Request) string { return r.URL.Path }})
	if k := custom.Key(req); k != "/repos" {
		t.Fatal(k)
	}
}

func TestValidate(t *testing.T) {
	o := Options{
		ReserveUnits:    new(int64(-1)),
		ReserveFraction: new(1.5),
		MaxRetryAfter:   -1,
		MaxWait:         -1,
		TTL:             -1,
		AssumedReset:    -1,
		Backoff:         headroom.Backoff{Initial: headroom.Duration(time.Minute), Max: headroom.Duration(time.Second), Multiplier: 0.5, Jitter: new(2.0)},
		MaxInFlight:     -3,
	}
	err := o.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var oe *headroom.ConfigError
		if !errors.As(e, &oe) {
			t.Fatalf("%T is not a ConfigError", e)
		}
		fields = append(fields, oe.Field)
	}
	want := []string{"ReserveUnits", "ReserveFraction", "MaxRetryAfter", "MaxWait", "TTL", "AssumedReset", "Backoff.Multiplier", "Backoff.Jitter", "Backoff.Max", "MaxInFlight"}
	if diff := cmp.Diff(want, fields); diff != "" {
		t.Fatalf("fields (-want +got):\n%s", diff)
	}
	if _, err := New(o); err == nil {
		t.Fatal("New accepted invalid options")
	}
	if err := (&Options{}).Validate(); err != nil {
		t.Fatal(err)
	}
}

// A throttle without a hint of a paced attempt is the pacer's to answer,
// however long the throttles go on: the pacer slows down, and stops and
// probes alone when the server refuses at any pace, which a backoff here
// would hold up. The same throttles of an attempt nobody paces back the
// key off.
func TestPacedThrottlesAreThePacers(t *testing.T) {
	g := newGuard(t, Options{})
	for i := range 20 {
		sent := t0.Add(sec(0.5 * float64(i)))
		g.Observe("h", Response{Status: 429, Sent: sent, Paced: true}, sent.Add(sec(0.01)))
		if d := admit(g, "h", sent.Add(sec(0.02))); d != 0 {
			t.Fatalf("paced throttle %d, sent %v after the first: held %v", i+1, sent.Sub(t0), d)
		}
	}
	g.Observe("u", Response{Status: 429, Sent: t0}, t0.Add(sec(0.01)))
	if d := admit(g, "u", t0.Add(sec(0.01))); d < sec(0.8) || d > sec(1.2) {
		t.Fatalf("a throttle nobody paces: wait %v, want the first backoff step, 1s ± 20%%", d)
	}
}

// QueueLimit bounds the units Acquire holds for a key: past it an attempt
// is refused at once (queue_full); the held ones go when the key has room.
func TestQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{QueueLimit: new(3)})
		start := time.Now()
		g.Observe("h", Response{Status: 200, Header: xh(0, 10, 30*time.Second)}, start)
		var held sync.WaitGroup
		for _, cost := range []int{2, 1} {
			held.Go(func() {
				if _, err := g.Acquire(t.Context(), "h", cost); err != nil {
					t.Errorf("held attempt of %d: %v", cost, err)
				}
			})
		}
		synctest.Wait()
		var rl *limit.RateLimitedError
		if _, err := g.Acquire(t.Context(), "h", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonQueueFull || rl.RetryAfter != 30*time.Second {
			t.Fatalf("a fourth unit: %v; want queue_full after 30s", err)
		}
		if _, err := g.Acquire(t.Context(), "other", 5); err != nil {
			t.Fatalf("another key: %v", err)
		}
		held.Wait()
		if got := time.Since(start); got < 30*time.Second {
			t.Fatalf("held for %v; want until the reset, 30s, or after", got)
		}
		if n := g.own("h", 0).waiting.Load(); n != 0 {
			t.Fatalf("%d units still counted as held after every Acquire returned", n)
		}
	})
}

// The guard keeps state for at most MaxKeys keys: a stream of new keys
// drops the least recently used, never one in use, one a Retry-After
// blocks, nor one used since the others.
func TestMaxKeysDropsTheLeastRecentlyUsed(t *testing.T) {
	g := newGuard(t, Options{MaxKeys: 8, MaxInFlight: 1})
	busy, err := g.Acquire(t.Context(), "busy", 1)
	if err != nil {
		t.Fatal(err)
	}
	g.Observe("blocked", Response{Status: http.StatusTooManyRequests, Header: http.Header{"Retry-After": {"60"}}}, time.Now())
	g.Observe("known", Response{Status: 200, Header: xh(0, 10, time.Hour)}, time.Now())
	for i := range 100 {
		g.Observe(fmt.Sprintf("k%d.test", i), Response{Status: 200, Header: xh(5, 10, time.Hour)}, time.Now())
		admit(g, "known", time.Now()) // used all along: it stays
		if n := g.size(); n > 8 {
			t.Fatalf("after %d new keys the guard holds %d; want at most 8", i+1, n)
		}
	}
	for _, key := range []string{"busy", "blocked", "known"} {
		if _, ok := g.State(key, time.Now()); !ok {
			t.Errorf("%s was dropped", key)
		}
	}
	if _, ok := g.State("k0.test", time.Now()); ok {
		t.Error("the least recently used key was kept")
	}
	if d := admit(g, "blocked", time.Now()); d <= 0 {
		t.Errorf("the blocked key admits an attempt (wait %v): what the server asked for was forgotten", d)
	}
	busy.Release()
}

// A context that has ended takes nothing from the guard, as from every
// limiter, even when the key has room.
func TestEndedContextTakesNothing(t *testing.T) {
	g := newGuard(t, Options{MaxInFlight: 1, QueueLimit: new(0)})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := g.Acquire(ctx, "h", 1); err != context.Canceled {
		t.Fatalf("a cancelled context: %v; want context.Canceled", err)
	}
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	var rl *limit.RateLimitedError
	if _, err := g.Acquire(expired, "h", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline {
		t.Fatalf("an expired context: %v; want a deadline refusal", err)
	}
	s, err := g.Acquire(t.Context(), "h", 1)
	if err != nil {
		t.Fatalf("the slot the ended contexts left: %v", err)
	}
	s.Release()
}
