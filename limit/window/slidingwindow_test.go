package window

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
)

const ms = time.Millisecond

func newWindow(t testing.TB, permits int, window time.Duration, segments int) *SlidingWindow {
	t.Helper()
	w, err := NewSlidingWindow(permits, window, segments)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func mustTake(t *testing.T, w *SlidingWindow, now time.Duration, cost int) {
	t.Helper()
	if ok, ra := w.TryAcquire(now, cost); !ok {
		t.Fatalf("TryAcquire(%v, %d) refused, retryAfter %v; want granted", now, cost, ra)
	}
}

func mustRefuse(t *testing.T, w *SlidingWindow, now time.Duration, cost int, wantRetry time.Duration) {
	t.Helper()
	if ok, ra := w.TryAcquire(now, cost); ok || ra != wantRetry {
		t.Fatalf("TryAcquire(%v, %d) = %v, retryAfter %v; want refused, retryAfter %v", now, cost, ok, ra, wantRetry)
	}
	if got := w.RetryAfter(now, cost); got != wantRetry {
		t.Fatalf("RetryAfter(%v, %d) = %v; want %v", now, cost, got, wantRetry)
	}
}

// Every bad setting is a *headroom.ConfigError naming its parameter, all of
// them at once; the bounds themselves are accepted.
func TestWindowNewRejectsInvalid(t *testing.T) {
	for _, c := range []struct {
		permits  int
		window   time.Duration
		segments int
		fields   []string
	}{
		{0, time.Second, 8, []string{"permits"}},
		{1, 0, 8, []string{"window"}},
		{1, time.Second, 0, []string{"segments"}},
		{1, 5, 6, []string{"segments"}},
		{-1, time.Second, 1, []string{"permits"}},
		{0, -1, 0, []string{"permits", "window", "segments"}},
	} {
		_, err := NewSlidingWindow(c.permits, c.window, c.segments)
		if !errors.Is(err, headroom.ErrConfig) {
			t.Errorf("NewSlidingWindow(%d, %v, %d) error %v; want ErrConfig", c.permits, c.window, c.segments, err)
		}
		if diff := cmp.Diff(c.fields, configFields(t, err, "window")); diff != "" {
			t.Errorf("NewSlidingWindow(%d, %v, %d) problems (-want +got):\n%s", c.permits, c.window, c.segments, diff)
		}
	}
	for _, c := range []struct {
		permits  int
		window   time.Duration
		segments int
	}{{1, 1, 1}, {1, 5, 5}, {math.MaxInt, Never, 1}} {
		if _, err := NewSlidingWindow(c.permits, c.window, c.segments); err != nil {
			t.Errorf("NewSlidingWindow(%d, %v, %d): %v", c.permits, c.window, c.segments, err)
		}
	}
}

// configFields lists the Field of each *headroom.ConfigError err joins,
// failing t on any other error or another Package.
func configFields(t *testing.T, err error, pkg string) []string {
	t.Helper()
	var fields []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if !errors.As(e, &ce) || ce.Package != pkg {
			t.Fatalf("%v is not a *headroom.ConfigError of package %s", e, pkg)
		}
		fields = append(fields, ce.Field)
	}
	return fields
}

func TestWindowRetryAfterIsExact(t *testing.T) {
	w := newWindow(t, 10, time.Second, 4) // segments of 250ms
	mustTake(t, w, 0, 4)
	mustTake(t, w, 300*ms, 6)
	// One permit needs the slot of [0, 250ms) to expire: its last grant was at 0.
	mustRefuse(t, w, 500*ms, 1, 500*ms)
	// Five need both slots: the second's last grant was at 300ms.
	mustRefuse(t, w, 500*ms, 5, 800*ms)
	mustRefuse(t, w, time.Second-1, 4, 1)
	if got := w.RetryAfter(time.Second, 4); got != 0 {
		t.Fatalf("RetryAfter at the expiry = %v; want 0", got)
	}
	mustTake(t, w, time.Second, 4)
	mustRefuse(t, w, time.Second, 1, 300*ms)
}

func TestWindowSlotExpiresAtItsLastGrant(t *testing.T) {
	w := newWindow(t, 2, time.Second, 2) // segments of 500ms
	mustTake(t, w, 0, 1)
	mustTake(t, w, 400*ms, 1) // same segment, later grant
	// The first permit is a window old at 1s, but it shares a slot with the
	// second, so neither is free before 1.4s: never early, at most one
	// segment's spread late.
	mustRefuse(t, w, time.Second, 1, 400*ms)
	mustTake(t, w, 1400*ms, 2)
}

func TestWindowCostBounds(t *testing.T) {
	w := newWindow(t, 3, time.Second, 8)
	if ok, ra := w.TryAcquire(0, 4); ok || ra != Never {
		t.Errorf("TryAcquire(cost above permits) = %v, %v; want refused with retryAfter Never", ok, ra)
	}
	if ok, ra := w.TryAcquire(0, -1); ok || ra != Never {
		t.Errorf("TryAcquire(negative cost) = %v, %v; want refused with retryAfter Never", ok, ra)
	}
	if w.RetryAfter(0, 4) != Never || w.RetryAfter(0, -1) != Never {
		t.Error("RetryAfter of an impossible cost is not Never")
	}
	mustTake(t, w, 0, 3)
	// Cost 0 is granted even when the window is full, and takes nothing.
	mustTake(t, w, 0, 0)
	mustRefuse(t, w, 0, 1, time.Second)
	if got := w.Available(time.Second); got != 3 {
		t.Errorf("Available after a window = %d; want 3", got)
	}
}

func TestWindowOneSegmentAndOneNanosecondSegments(t *testing.T) {
	one := newWindow(t, 2, time.Second, 1)
	mustTake(t, one, 100*ms, 1)
	mustTake(t, one, 900*ms, 1)
	mustRefuse(t, one, 1500*ms, 1, 400*ms) // both in one slot, last at 900ms
	mustTake(t, one, 1900*ms, 2)

	fine := newWindow(t, 2, 10, 10) // one-nanosecond segments: an exact log
	mustTake(t, fine, 0, 1)
	mustTake(t, fine, 3, 1)
	mustRefuse(t, fine, 9, 1, 1)
	mustTake(t, fine, 10, 1)
	mustRefuse(t, fine, 10, 1, 3)
	mustTake(t, fine, 13, 1)
}

func TestWindowLongIdleAndSegmentBoundaries(t *testing.T) {
	w := newWindow(t, 4, time.Second, 4)
	for _, at := range []time.Duration{0, 250 * ms, 500 * ms, 750 * ms} { // each on a boundary
		mustTake(t, w, at, 1)
	}
	mustRefuse(t, w, 999*ms, 1, 1*ms)
	mustTake(t, w, 1000*ms, 1)
	// After many idle windows every slot has expired, whatever the ring index.
	far := 1000*time.Hour + 125*ms
	if got := w.Available(far); got != 4 {
		t.Fatalf("Available after a long idle = %d; want 4", got)
	}
	mustTake(t, w, far, 4)
	mustRefuse(t, w, far+time.Second-1, 1, 1)
}

func TestWindowClampsTimeGoingBackwards(t *testing.T) {
	w := newWindow(t, 1, time.Second, 4)
	mustTake(t, w, 2*time.Second, 1)
	// A now that arrives late is counted at the latest time seen.
	ok, ra := w.TryAcquire(time.Second, 1)
	if ok || ra != 2*time.Second {
		t.Fatalf("TryAcquire(earlier now) = %v, retryAfter %v; want refused, retryAfter 2s (from the caller's now)", ok, ra)
	}
	// Granted at an earlier now, the permit is counted at 2s: it is still
	// counted a nanosecond before 3s, and free at 3s.
	w2 := newWindow(t, 2, time.Second, 4)
	mustTake(t, w2, 2*time.Second, 1)
	if ok, _ := w2.TryAcquire(time.Second, 1); !ok {
		t.Fatal("TryAcquire(earlier now) refused; want granted, counted at 2s")
	}
	mustRefuse(t, w2, 3*time.Second-1, 1, 1)
	mustTake(t, w2, 3*time.Second, 1)
}

// A window near math.MaxInt64 ("never refill") holds its permits for ever:
// the expiry of a slot and the length of a segment saturate instead of
// wrapping round to the past, which would free every permit at once.
func TestWindowHugeWindowNeverOverflows(t *testing.T) {
	for _, c := range []struct {
		window   time.Duration
		segments int
	}{{Never, 8}, {Never, 1}, {Never - 1, 1024}, {Never / 2, 3}} {
		w := newWindow(t, 2, c.window, c.segments)
		if w.segment <= 0 || w.segment < c.window/time.Duration(c.segments) {
			t.Errorf("window %v in %d segments: segment %v", c.window, c.segments, w.segment)
		}
		mustTake(t, w, time.Second, 1)
		mustTake(t, w, time.Hour, 1)
		for _, now := range []time.Duration{time.Hour, 1000 * time.Hour, Never / 4} {
			if ok, ra := w.TryAcquire(now, 1); ok || ra <= 0 {
				t.Fatalf("window %v in %d segments: TryAcquire(%v) = %v, retryAfter %v; want refused, retryAfter above 0",
					c.window, c.segments, now, ok, ra)
			}
			if ra := w.RetryAfter(now, 2); ra <= 0 {
				t.Fatalf("window %v: RetryAfter(%v, 2) = %v; want above 0", c.window, now, ra)
			}
			if n := w.Available(now); n != 0 {
				t.Fatalf("window %v: Available(%v) = %d; want 0", c.window, now, n)
			}
		}
	}
	// Exact where it does not saturate: a permit taken at 1s with a window
	// of Never/2 is free at Never/2+1s.
	w := newWindow(t, 1, Never/2, 1)
	mustTake(t, w, time.Second, 1)
	mustRefuse(t, w, 2*time.Second, 1, Never/2-time.Second)
	mustTake(t, w, Never/2+time.Second, 1)
}

// Permits near math.MaxInt64 are counted without wrapping: a full window
// refuses one more permit.
func TestWindowHugePermitsNeverWrap(t *testing.T) {
	w := newWindow(t, math.MaxInt, time.Second, 8)
	mustTake(t, w, 0, math.MaxInt)
	mustRefuse(t, w, 0, 1, time.Second)
	mustTake(t, w, time.Second, math.MaxInt-1)
	mustTake(t, w, time.Second, 1)
	mustRefuse(t, w, time.Second, math.MaxInt, time.Second)
}

// grant is one admitted request, as the engine counted it.
type grant struct {
	at   time.Duration
	cost int
}

// maxInWindow is the most permits granted in any half-open interval
// [s, s+window). The maximum is reached by an interval starting at a grant.
func maxInWindow(grants []grant, window time.Duration) int {
	slices.SortFunc(grants, func(a, b grant) int { return int(a.at - b.at) })
	best, sum, j := 0, 0, 0
	for i := range grants {
		for j < len(grants) && grants[j].at < grants[i].at+window {
			sum += grants[j].cost
			j++
		}
		best = max(best, sum)
		sum -= grants[i].cost
	}
	return best
}

// TestWindowStrictAtEveryAlignment drives the engine with the pattern that
// breaks plain segment rotation — a burst at the very end of a segment, then
// another just after it leaves — and with random traffic, and checks every
// interval of length Window against an exact log.
func TestWindowStrictAtEveryAlignment(t *testing.T) {
	for _, segments := range []int{1, 2, 3, 8, 60} {
		const permits, window = 100, time.Minute
		w := newWindow(t, permits, window, segments)
		rng := rand.New(rand.NewPCG(uint64(segments), 7))
		var grants []grant
		var now time.Duration
		seg := window / time.Duration(segments)
		for range 20000 {
			switch rng.IntN(4) {
			case 0: // land at the last nanosecond of a segment
				now = (now/seg+1)*seg - 1
			case 1: // the first nanosecond of the next one
				now = (now/seg + 1) * seg
			default:
				now += time.Duration(rng.Int64N(int64(seg)))
			}
			cost := 1 + rng.IntN(10)
			if ok, _ := w.TryAcquire(now, cost); ok {
				grants = append(grants, grant{now, cost})
			}
		}
		if got := maxInWindow(grants, window); got > permits {
			t.Errorf("segments %d: %d permits in one window; want at most %d", segments, got, permits)
		}
	}
}

// TestWindowAdmitsOnlyWhatAnExactLogAdmits compares each grant with a log of
// every grant time: the engine must never grant what the log would refuse.
func TestWindowAdmitsOnlyWhatAnExactLogAdmits(t *testing.T) {
	const permits, window = 20, time.Second
	w := newWindow(t, permits, window, 5)
	rng := rand.New(rand.NewPCG(1, 2))
	var log []grant
	var now time.Duration
	granted := 0
	for range 50000 {
		now += time.Duration(rng.Int64N(int64(40 * ms)))
		cost := rng.IntN(4)
		ok, _ := w.TryAcquire(now, cost)
		at := now // now never goes backwards here
		if !ok {
			continue
		}
		inWindow := cost
		for _, g := range log {
			if g.at > at-window {
				inWindow += g.cost
			}
		}
		if inWindow > permits {
			t.Fatalf("granted %d at %v with %d already in the last window; want at most %d in all", cost, at, inWindow-cost, permits)
		}
		log = append(log, grant{at, cost})
		granted += cost
		for len(log) > 0 && log[0].at <= at-window {
			log = log[1:]
		}
	}
	if granted == 0 {
		t.Fatal("nothing granted")
	}
}

// TestWindowUtilisationUnderSaturation keeps demand above the limit and
// measures what is admitted. The floor is the documented bound,
// Segments/(Segments+1); with callers polling often it is nearly all.
func TestWindowUtilisationUnderSaturation(t *testing.T) {
	const permits, window, segments = 100, time.Second, 8
	const windows = 300
	for _, c := range []struct {
		name string
		step func(rng *rand.Rand, ra time.Duration) time.Duration
		want float64
	}{
		// A caller that comes back exactly when told.
		{"at retryAfter", func(_ *rand.Rand, ra time.Duration) time.Duration { return ra }, 0.999},
		// Callers polling every millisecond.
		{"polling", func(*rand.Rand, time.Duration) time.Duration { return ms }, 0.99},
		// Callers arriving at random, never more than 30ms apart: the grants
		// in a segment spread out, which is the case the bound is for.
		{"random", func(rng *rand.Rand, _ time.Duration) time.Duration { return time.Duration(rng.Int64N(int64(30 * ms))) }, float64(segments) / (segments + 1)},
	} {
		w := newWindow(t, permits, window, segments)
		rng := rand.New(rand.NewPCG(3, 4))
		var now, ra time.Duration
		granted := 0
		for now < windows*window {
			var ok bool
			if ok, ra = w.TryAcquire(now, 1); ok {
				granted++
				continue // demand is saturated: ask again at once
			}
			now += max(c.step(rng, ra), 1)
		}
		got := float64(granted) / (permits * windows)
		if got < c.want || got > 1 {
			t.Errorf("%s: admitted %.4f of the quota; want between %.4f and 1", c.name, got, c.want)
		}
		t.Logf("%s: admitted %.4f of the quota", c.name, got)
	}
}

func BenchmarkSlidingWindowTryAcquire(b *testing.B) {
	w := newWindow(b, 1<<40, time.Hour, 8)
	var now time.Duration
	b.ReportAllocs()
	for b.Loop() {
		now += 10
		w.TryAcquire(now, 1)
	}
}
