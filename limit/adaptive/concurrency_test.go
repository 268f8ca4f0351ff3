package adaptive

import (
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
)

const msec = time.Millisecond

// grab is TryAcquire's verdict alone: the engine reads no time and names
// no wait.
func grab(c *Concurrency, n int) bool {
	ok, _ := c.TryAcquire(0, n)
	return ok
}

func newConc(t testing.TB, cfg ConcurrencyConfig) *Concurrency {
	t.Helper()
	c, err := NewConcurrency(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// warm returns an engine past its warm-up with a baseline of about 10 ms,
// nothing in flight and a fresh round, at time 1 s.
func concWarm(t *testing.T, cfg ConcurrencyConfig) (*Concurrency, time.Duration) {
	t.Helper()
	c := newConc(t, cfg)
	now := time.Duration(0)
	for range latWarmup {
		now += msec
		if !grab(c, 1) {
			t.Fatal("refused during warm-up with nothing in flight")
		}
		c.Release(now, 10*msec, 1, Success)
	}
	if b, ok := c.Baseline(); !ok || b < 9*msec || b > 11*msec {
		t.Fatalf("baseline after warm-up = %v, %v; want ≈10ms", b, ok)
	}
	// Finish the round in progress with fast calls, unconstrained.
	for c.roundDone != 0 {
		now += msec
		grab(c, 1)
		c.Release(now, 10*msec, 1, Success)
	}
	if c.Limit() != c.cfg.Initial {
		t.Fatalf("limit %d after an unconstrained warm-up, want Initial %d", c.Limit(), c.cfg.Initial)
	}
	return c, now
}

// round runs one round: the limit's worth of calls, all in flight at once
// if full (so the limit constrains the round), each taking latency.
func concRound(c *Concurrency, now time.Duration, full bool, latency func(i int) time.Duration) (time.Duration, bool) {
	n := c.Limit()
	if !full {
		n = max(n/2, 1)
	}
	for range n {
		grab(c, 1)
	}
	changed := false
	size := c.roundSize
	start := now
	for i := range size {
		if i >= n { // the round needs more calls than are in flight
			grab(c, 1)
		}
		t := start + time.Duration(i+1)*time.Microsecond + latency(i)
		now = max(now, t)
		changed = c.Release(t, latency(i), 1, Success) || changed
	}
	return now, changed
}

func concFixed(d time.Duration) func(int) time.Duration { return func(int) time.Duration { return d } }

func TestConcurrencyDefaults(t *testing.T) {
	c := newConc(t, ConcurrencyConfig{})
	want := ConcurrencyConfig{Minimum: 4, Maximum: 200, Initial: 20, Multiple: 2.0, DecreaseFactor: 0.9}
	if got := c.Config(); got != want {
		t.Fatalf("Config() = %+v, want %+v", got, want)
	}
	if c.Limit() != 20 {
		t.Fatalf("Limit() = %d, want Initial 20", c.Limit())
	}
	if _, ok := c.CurrentLimit(); ok {
		t.Fatal("CurrentLimit reports a value before any call")
	}
	if _, ok := c.Baseline(); ok {
		t.Fatal("Baseline reports a value before any call")
	}
}

// Until 100 successful calls, rounds end without a decision: the limit
// holds at Initial even when every call is slow or dropped.
func TestConcurrencyWarmupHoldsInitial(t *testing.T) {
	c := newConc(t, ConcurrencyConfig{})
	now := time.Duration(0)
	for i := range latWarmup - 1 {
		for range 20 {
			grab(c, 1) // constrained
		}
		for j := range 20 {
			now += msec
			if j == 0 && i == 0 {
				c.Release(now, msec, 1, Dropped)
				continue
			}
			c.Release(now, time.Duration(i+1)*msec, 1, Success)
		}
		if _, ok := c.CurrentLimit(); ok && c.base.seen < latWarmup {
			t.Fatalf("CurrentLimit reports a value after %d calls", c.base.seen)
		}
		if c.base.seen >= latWarmup {
			break
		}
		if c.Limit() != 20 {
			t.Fatalf("limit %d during warm-up, want Initial 20", c.Limit())
		}
	}
	if l, ok := c.CurrentLimit(); !ok || l != c.Limit() {
		t.Fatalf("CurrentLimit() = %d, %v after warm-up, want %d, true", l, ok, c.Limit())
	}
}

func TestConcurrencyDecreasesWhenFastestIsSlow(t *testing.T) {
	c, now := concWarm(t, ConcurrencyConfig{})
	// The fastest call of the round at 21 msec > 2 × 10 msec.
	now, changed := concRound(c, now, false, concFixed(21*msec))
	if !changed || c.Limit() != 18 {
		t.Fatalf("limit %d (changed %v) after a slow round, want 20 × 0.9 = 18", c.Limit(), changed)
	}
	// One fast call among slow ones is a tail, not a queue: no decrease.
	now, _ = concRound(c, now, false, func(i int) time.Duration {
		if i == 3 {
			return 10 * msec
		}
		return time.Second
	})
	if c.Limit() != 18 {
		t.Fatalf("limit %d after a round with one fast call, want 18 kept", c.Limit())
	}
	// Down to Minimum, never below.
	for range 30 {
		now, _ = concRound(c, now, true, concFixed(time.Second))
	}
	if c.Limit() != 4 {
		t.Fatalf("limit %d after many slow rounds, want Minimum 4", c.Limit())
	}
}

func TestConcurrencyGrowsOnlyWhenConstrained(t *testing.T) {
	c, now := concWarm(t, ConcurrencyConfig{})
	// Under-used and fast: idle never grows.
	for range 10 {
		now, _ = concRound(c, now, false, concFixed(10*msec))
	}
	if c.Limit() != 20 {
		t.Fatalf("limit %d after unconstrained rounds, want 20", c.Limit())
	}
	// In-flight reaching the limit: +1 per round.
	now, changed := concRound(c, now, true, concFixed(10*msec))
	if !changed || c.Limit() != 21 {
		t.Fatalf("limit %d (changed %v) after a full round, want 21", c.Limit(), changed)
	}
	// A refusal alone constrains the round.
	grab(c, 1)
	for grab(c, 0) && c.InFlight() < 2 {
		break
	}
	n := c.Limit()
	for i := range n {
		if i == 0 {
			c.Blocked() // a caller queued behind others
		}
		now += msec
		grab(c, 1)
		c.Release(now, 10*msec, 1, Success)
	}
	c.Release(now, 10*msec, 1, Success)
	if c.Limit() != 22 {
		t.Fatalf("limit %d after a round with a queued caller, want 22", c.Limit())
	}
}

func TestConcurrencyNeverAboveMaximum(t *testing.T) {
	c, now := concWarm(t, ConcurrencyConfig{Maximum: 23})
	for range 10 {
		now, _ = concRound(c, now, true, concFixed(10*msec))
	}
	if c.Limit() != 23 {
		t.Fatalf("limit %d, want Maximum 23", c.Limit())
	}
}

func TestConcurrencyRefusesAboveLimit(t *testing.T) {
	c := newConc(t, ConcurrencyConfig{Initial: 5})
	for i := range 5 {
		if !grab(c, 1) {
			t.Fatalf("refused call %d under a limit of 5", i+1)
		}
	}
	if grab(c, 1) || c.fits(1) {
		t.Fatal("granted a sixth unit under a limit of 5")
	}
	if !grab(c, 0) {
		t.Fatal("refused a cost of 0")
	}
	c.Release(0, 0, 2, Ignored)
	if !grab(c, 2) || c.InFlight() != 5 {
		t.Fatalf("in flight %d after freeing 2 and taking 2, want 5", c.InFlight())
	}
}

// A call larger than the limit (the shell keeps it within Maximum) is
// granted when nothing is in flight, and only then; while it holds more than
// the limit nothing else is granted.
func TestConcurrencyGrantsCallAboveLimitOnlyWhenIdle(t *testing.T) {
	c := newConc(t, ConcurrencyConfig{Initial: 4})
	if !grab(c, 1) {
		t.Fatal("refused 1 unit under a limit of 4")
	}
	if c.fits(6) || grab(c, 6) {
		t.Fatal("granted 6 units with 1 in flight under a limit of 4")
	}
	c.Release(0, 0, 1, Ignored)
	if !c.fits(6) || !grab(c, 6) {
		t.Fatal("refused 6 units with nothing in flight: no release could ever make room")
	}
	if c.fits(1) || grab(c, 1) {
		t.Fatalf("granted 1 more unit with %d in flight under a limit of 4", c.InFlight())
	}
	c.Release(0, 0, 6, Ignored)
	if c.InFlight() != 0 || c.Limit() != 4 {
		t.Fatalf("in flight %d, limit %d after the release, want 0 and 4", c.InFlight(), c.Limit())
	}
}

// A dropped call forces its round to decrease, once, however many dropped;
// its duration feeds neither the baseline nor the fastest.
func TestConcurrencyDroppedForcesDecrease(t *testing.T) {
	c, now := concWarm(t, ConcurrencyConfig{})
	seen := c.base.seen
	for range 20 {
		grab(c, 1)
	}
	for i := range 20 {
		now += msec
		if i < 5 {
			c.Release(now, time.Microsecond, 1, Dropped)
		} else {
			c.Release(now, 10*msec, 1, Success)
		}
	}
	if c.Limit() != 18 {
		t.Fatalf("limit %d after a fast round with 5 drops, want one decrease to 18", c.Limit())
	}
	if c.base.seen != seen+15 {
		t.Fatalf("baseline saw %d samples from 15 successes and 5 drops, want 15", c.base.seen-seen)
	}
}

func TestConcurrencyIgnoredTeachesNothing(t *testing.T) {
	c, now := concWarm(t, ConcurrencyConfig{})
	seen, done := c.base.seen, c.roundDone
	for range 100 {
		grab(c, 1)
	}
	for range 20 {
		c.Release(0, 0, 1, Ignored)
	}
	if c.base.seen != seen || c.roundDone != done || c.Limit() != 20 || c.InFlight() != 0 {
		t.Fatalf("ignored calls changed the engine: seen %d→%d, round %d→%d, limit %d, in flight %d",
			seen, c.base.seen, done, c.roundDone, c.Limit(), c.InFlight())
	}
	_ = now
}

func TestConcurrencyZeroAllocs(t *testing.T) {
	c := newConc(t, ConcurrencyConfig{})
	now := time.Duration(0)
	if n := testing.AllocsPerRun(10_000, func() {
		now += 50 * time.Microsecond
		if grab(c, 1) {
			c.Release(now, time.Duration(now%(7*msec)), 1, Success)
		}
	}); n != 0 {
		t.Fatalf("TryAcquire+Release allocates %v times", n)
	}
}

func BenchmarkConcurrencyAcquireRelease(b *testing.B) {
	c := newConc(b, ConcurrencyConfig{})
	var now time.Duration
	for b.Loop() {
		now += time.Microsecond
		grab(c, 1)
		c.Release(now, time.Duration(now%(7*msec)), 1, Success)
	}
}

// Every bad setting is a *headroom.ConfigError naming its field, all at
// once. Before, the engine repaired them silently: a Maximum below the
// Minimum was raised to it, a DecreaseFactor of 1.5 became 0.9, and a
// Multiple of 0.5 was used as it was.
func TestConcurrencyConfigProblems(t *testing.T) {
	for _, c := range []struct {
		cfg    ConcurrencyConfig
		fields []string
	}{
		{ConcurrencyConfig{Minimum: -1, Maximum: -2, Initial: -3, Multiple: 0.5, DecreaseFactor: 1.5},
			[]string{"Minimum", "Maximum", "Initial", "Multiple", "DecreaseFactor"}},
		{ConcurrencyConfig{Minimum: 10, Maximum: 5}, []string{"Minimum"}},
		{ConcurrencyConfig{Minimum: 300}, []string{"Minimum"}}, // above the default Maximum
		{ConcurrencyConfig{Initial: 300}, []string{"Initial"}},
		{ConcurrencyConfig{Minimum: 30, Initial: 25}, []string{"Initial"}},
		{ConcurrencyConfig{Multiple: 1}, []string{"Multiple"}},
		{ConcurrencyConfig{Multiple: math.Inf(1), DecreaseFactor: math.NaN()}, []string{"Multiple", "DecreaseFactor"}},
		{ConcurrencyConfig{DecreaseFactor: 1}, []string{"DecreaseFactor"}},
	} {
		_, err := NewConcurrency(c.cfg)
		if !errors.Is(err, headroom.ErrConfig) {
			t.Errorf("NewConcurrency(%+v) error %v; want ErrConfig", c.cfg, err)
			continue
		}
		var got []string
		for _, p := range problemsOf(c.cfg.Validate()) {
			if p.Package != "adaptive" {
				t.Errorf("problem %v is not package adaptive's", p)
			}
			got = append(got, p.Field)
		}
		if diff := cmp.Diff(c.fields, got); diff != "" {
			t.Errorf("NewConcurrency(%+v) problems (-want +got):\n%s", c.cfg, diff)
		}
	}
}

// A zero field takes its default, and a default Initial is clamped into
// the bounds set beside it.
func TestConcurrencyConfigDefaults(t *testing.T) {
	for _, c := range []struct {
		cfg, want ConcurrencyConfig
	}{
		{ConcurrencyConfig{}, ConcurrencyConfig{Minimum: 4, Maximum: 200, Initial: 20, Multiple: 2, DecreaseFactor: 0.9}},
		{ConcurrencyConfig{Minimum: 30}, ConcurrencyConfig{Minimum: 30, Maximum: 200, Initial: 30, Multiple: 2, DecreaseFactor: 0.9}},
		{ConcurrencyConfig{Maximum: 10}, ConcurrencyConfig{Minimum: 4, Maximum: 10, Initial: 10, Multiple: 2, DecreaseFactor: 0.9}},
		{ConcurrencyConfig{Minimum: 2, Maximum: 10, Initial: 5, Multiple: 1.5, DecreaseFactor: 0.8},
			ConcurrencyConfig{Minimum: 2, Maximum: 10, Initial: 5, Multiple: 1.5, DecreaseFactor: 0.8}},
	} {
		e := newConc(t, c.cfg)
		if diff := cmp.Diff(c.want, e.Config()); diff != "" || e.Limit() != c.want.Initial {
			t.Errorf("NewConcurrency(%+v): limit %d, config (-want +got):\n%s", c.cfg, e.Limit(), diff)
		}
	}
}
