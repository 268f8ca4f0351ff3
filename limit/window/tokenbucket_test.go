package window

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
)

const msec = time.Millisecond

func TestTokenBucketStartsFullThenRefusesWithExactRetryAfter(t *testing.T) {
	b := newBucket(t, 10, 3) // a permit every 100ms
	for i := range 3 {
		if ok, _ := b.TryAcquire(0, 1); !ok {
			t.Fatalf("take %d of a full bucket of 3 refused", i+1)
		}
	}
	ok, retry := b.TryAcquire(0, 1)
	if ok || retry != 100*msec {
		t.Fatalf("TryAcquire on an empty bucket = %v, %v; want false, 100ms", ok, retry)
	}
	// Exact: one nanosecond early is still too early, on time succeeds.
	if ok, retry := b.TryAcquire(100*msec-1, 1); ok || retry != 1 {
		t.Fatalf("TryAcquire 1ns before the refill = %v, %v; want false, 1ns", ok, retry)
	}
	if ok, _ := b.TryAcquire(100*msec, 1); !ok {
		t.Fatal("TryAcquire at the promised time refused")
	}
}

func TestTokenBucketRetryAfterScalesWithCostAndDebt(t *testing.T) {
	b := newBucket(t, 10, 3)
	b.TryAcquire(0, 3)
	if ok, retry := b.TryAcquire(0, 2); ok || retry != 200*msec {
		t.Fatalf("cost 2 on an empty bucket = %v, %v; want false, 200ms", ok, retry)
	}
	// 150ms later one permit and a half have come back: 50ms more for two.
	if ok, retry := b.TryAcquire(150*msec, 2); ok || retry != 50*msec {
		t.Fatalf("cost 2 at 150ms = %v, %v; want false, 50ms", ok, retry)
	}
	if ok, _ := b.TryAcquire(200*msec, 2); !ok {
		t.Fatal("cost 2 at 200ms refused")
	}
}

func TestTokenBucketRefillStopsAtBurst(t *testing.T) {
	b := newBucket(t, 10, 2)
	b.TryAcquire(0, 2)
	now := time.Hour // idle for an hour: full, not 36000 permits
	for i := range 2 {
		if ok, _ := b.TryAcquire(now, 1); !ok {
			t.Fatalf("take %d after idling refused", i+1)
		}
	}
	if ok, retry := b.TryAcquire(now, 1); ok || retry != 100*msec {
		t.Fatalf("third take after idling = %v, %v; want false, 100ms", ok, retry)
	}
}

func TestTokenBucketRefusalWritesNothing(t *testing.T) {
	b := newBucket(t, 10, 1)
	b.TryAcquire(0, 1)
	before := b.word.Load()
	for range 5 {
		b.TryAcquire(10*msec, 1)
		b.Reserve(10*msec, 1, 50*msec) // would be ready at 100ms: beyond maxAhead
	}
	if after := b.word.Load(); after != before {
		t.Fatalf("refusals moved TAT from %d to %d", before, after)
	}
}

func TestTokenBucketCostZeroAlwaysSucceedsAndTakesNothing(t *testing.T) {
	b := newBucket(t, 1, 1)
	b.TryAcquire(0, 1)
	before := b.word.Load()
	if ok, retry := b.TryAcquire(0, 0); !ok || retry != 0 {
		t.Fatalf("TryAcquire(cost 0) on an empty bucket = %v, %v; want true, 0", ok, retry)
	}
	if at, ok := b.Reserve(5, 0, 0); !ok || at != 5 {
		t.Fatalf("Reserve(cost 0) = %v, %v; want 5ns, true", at, ok)
	}
	if b.word.Load() != before {
		t.Fatal("cost 0 moved TAT")
	}
}

func TestTokenBucketCostAboveBurstNeverFits(t *testing.T) {
	b := newBucket(t, 10, 3)
	if ok, retry := b.TryAcquire(0, -1); ok || retry != Never {
		t.Fatalf("TryAcquire(cost -1) = %v, %v; want false, Never", ok, retry)
	}
	if ok, retry := b.TryAcquire(0, 4); ok || retry != Never {
		t.Fatalf("TryAcquire(4) with burst 3 = %v, %v; want false, Never", ok, retry)
	}
	if at, ok := b.Reserve(time.Second, 4, Never); ok || at != Never {
		t.Fatalf("Reserve(4) with burst 3 = %v, %v; want Never, false", at, ok)
	}
	if ok, _ := b.TryAcquire(0, 3); !ok {
		t.Fatal("refusing cost 4 took something")
	}
}

func TestTokenBucketFractionalRates(t *testing.T) {
	for _, c := range []struct {
		rate     float64
		interval time.Duration
	}{
		{0.5, 2 * time.Second},
		{0.1, 10 * time.Second},
		{3, 333333334},   // 1/3 s rounded up: never faster than asked
		{1e9 / 7, 7},     // 7.000000000000001 in float: not rounded up to 8
		{1000, msec},     // exact
		{1e9, 1},         // the highest rate
		{math.Inf(1), 0}, // no limit
	} {
		b := newBucket(t, c.rate, 1)
		if b.Interval() != c.interval {
			t.Errorf("rate %v: interval %v, want %v", c.rate, b.Interval(), c.interval)
		}
		if c.interval == 0 {
			continue
		}
		b.TryAcquire(0, 1)
		if ok, retry := b.TryAcquire(0, 1); ok || retry != c.interval {
			t.Errorf("rate %v: second take = %v, %v; want false, %v", c.rate, ok, retry, c.interval)
		}
	}
}

func TestTokenBucketUnlimitedGrantsEverythingUpToBurst(t *testing.T) {
	b := newBucket(t, math.Inf(1), 5)
	for i := range 1000 {
		if ok, _ := b.TryAcquire(0, 5); !ok {
			t.Fatalf("take %d refused without a limit", i)
		}
	}
	if ok, retry := b.TryAcquire(0, 6); ok || retry != Never {
		t.Fatalf("cost above burst without a limit = %v, %v; want false, Never", ok, retry)
	}
}

// A rate or burst the bucket cannot count is a *headroom.ConfigError naming
// it, every problem at once. Before, they were clamped, and a burst too
// large for its rate (1e9 at 0.5 a second) silently refilled faster than
// the rate asked.
func TestTokenBucketRejectsWhatItCannotCount(t *testing.T) {
	for _, c := range []struct {
		rate   float64
		burst  int
		fields []string
	}{
		{0, 1, []string{"rate"}},
		{-1, 1, []string{"rate"}},
		{math.NaN(), 3, []string{"rate"}},
		{math.Inf(-1), 3, []string{"rate"}},
		{2e9, 1, []string{"rate"}},
		{1e-30, 1, []string{"rate"}},
		{1, -5, []string{"burst"}},
		{1, 0, []string{"burst"}},
		{1e18, math.MaxInt, []string{"rate", "burst"}},
		{0.5, 1e9, []string{"burst"}},
		{1e-9, math.MaxInt32, []string{"burst"}},
	} {
		_, err := NewTokenBucket(c.rate, c.burst)
		if !errors.Is(err, headroom.ErrConfig) {
			t.Errorf("NewTokenBucket(%v, %v) error %v; want ErrConfig", c.rate, c.burst, err)
			continue
		}
		if diff := cmp.Diff(c.fields, configFields(t, err, "window")); diff != "" {
			t.Errorf("NewTokenBucket(%v, %v) problems (-want +got):\n%s", c.rate, c.burst, diff)
		}
	}
}

// The extremes the bounds allow work, and no time they produce overflows.
func TestTokenBucketExtremeSettingsDoNotOverflow(t *testing.T) {
	for _, c := range []struct {
		rate  float64
		burst int
	}{
		{1e9 / float64(maxSpan), 1},                 // a permit every 2^60 ns
		{1e9, maxBurst},                             // the fastest, the largest
		{1e9 / float64(maxSpan/maxBurst), maxBurst}, // the slowest rate for the largest burst
		{math.Inf(1), maxBurst},
	} {
		b := newBucket(t, c.rate, c.burst)
		if b.Burst() != c.burst || b.Interval() < 0 || int64(b.Interval())*int64(b.Burst()) > maxSpan {
			t.Errorf("NewTokenBucket(%v, %v): burst %d interval %v out of bounds", c.rate, c.burst, b.Burst(), b.Interval())
			continue
		}
		if ok, _ := b.TryAcquire(0, b.Burst()); !ok {
			t.Errorf("NewTokenBucket(%v, %v): a full bucket refused its burst", c.rate, c.burst)
		}
		if at, ok := b.Reserve(0, 1, Never); at < 0 || (ok && at-0 > time.Duration(maxSpan)) {
			t.Errorf("NewTokenBucket(%v, %v): Reserve = %v, %v", c.rate, c.burst, at, ok)
		}
	}
}

func newBucket(t testing.TB, rate float64, burst int) *TokenBucket {
	t.Helper()
	b, err := NewTokenBucket(rate, burst)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTokenBucketReservationsAreFIFO(t *testing.T) {
	b := newBucket(t, 10, 1)
	b.TryAcquire(0, 1)
	var last time.Duration
	for i, cost := range []int{1, 1, 1} {
		at, ok := b.Reserve(time.Duration(i)*msec, cost, time.Second)
		if !ok {
			t.Fatalf("reservation %d refused", i)
		}
		if want := time.Duration(i+1) * 100 * msec; at != want {
			t.Fatalf("reservation %d ready at %v, want %v", i, at, want)
		}
		if at <= last {
			t.Fatalf("reservation %d ready at %v, not after the one before (%v)", i, at, last)
		}
		last = at
	}
	// maxAhead bounds the wait: the next would be ready at 400ms.
	if at, ok := b.Reserve(0, 1, 399*msec); ok || at != 400*msec {
		t.Fatalf("Reserve beyond maxAhead = %v, %v; want 400ms, false", at, ok)
	}
	if at, ok := b.Reserve(0, 1, 400*msec); !ok || at != 400*msec {
		t.Fatalf("Reserve at exactly maxAhead = %v, %v; want 400ms, true", at, ok)
	}
}

func TestTokenBucketNoTryAcquireWhileAReservationPends(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		b := newBucket(t, float64(1+rng.IntN(100)), 1+rng.IntN(5))
		now := time.Duration(rng.Int64N(int64(time.Second)))
		var lastReady time.Duration
		for range 1 + rng.IntN(6) {
			if at, ok := b.Reserve(now, 1+rng.IntN(b.Burst()), time.Hour); ok {
				lastReady = max(lastReady, at)
			}
		}
		if lastReady <= now {
			continue
		}
		// Every moment before the last reservation is due: no cost fits.
		for range 50 {
			at := now + time.Duration(rng.Int64N(int64(lastReady-now)))
			cost := 1 + rng.IntN(b.Burst())
			if ok, retry := b.TryAcquire(at, cost); ok || at+retry < lastReady {
				t.Fatalf("round %d: TryAcquire(%v, %d) = %v, retry %v while a reservation pends until %v", round, at, cost, ok, retry, lastReady)
			}
			if ready, _ := b.Reserve(at, cost, 0); ready < lastReady+time.Duration(cost)*b.Interval() {
				t.Fatalf("round %d: a later Reserve would be ready at %v, before the pending %v", round, ready, lastReady)
			}
		}
	}
}

func TestTokenBucketCancelShiftsLaterWaitersAndLeaksNothing(t *testing.T) {
	b := newBucket(t, 10, 1)
	b.TryAcquire(0, 1)
	r1, _ := b.Reserve(0, 1, time.Second) // 100ms
	r2, _ := b.Reserve(0, 2, time.Second) // wait: burst 1 cannot hold 2
	if r2 != Never {
		t.Fatalf("cost 2 with burst 1 reserved at %v", r2)
	}
	r2, _ = b.Reserve(0, 1, time.Second)  // 200ms
	r3, _ := b.Reserve(0, 1, time.Second) // 300ms
	if r1 != 100*msec || r2 != 200*msec || r3 != 300*msec {
		t.Fatalf("ready at %v, %v, %v; want 100ms, 200ms, 300ms", r1, r2, r3)
	}

	shift, ok := b.Cancel(50*msec, r2, 1)
	if !ok || shift != 100*msec {
		t.Fatalf("Cancel of a pending reservation = %v, %v; want 100ms, true", shift, ok)
	}
	r3 -= shift // the caller's duty: r3 is now due at 200ms

	// r3 still pends until 200ms: nobody may take before it.
	if ok, retry := b.TryAcquire(150*msec, 1); ok || 150*msec+retry != r3+b.Interval() {
		t.Fatalf("TryAcquire at 150ms = %v, %v; want false, free at 300ms (after r3 at %v)", ok, retry, r3)
	}
	// The cancelled slot is not lost: the next reservation takes r3's old time.
	if at, ok := b.Reserve(60*msec, 1, time.Second); !ok || at != 300*msec {
		t.Fatalf("Reserve after Cancel = %v, %v; want 300ms, true", at, ok)
	}
	// Cancelling the tail gives its slot to the next booking.
	if shift, ok := b.Cancel(70*msec, 300*msec, 1); !ok || shift != 100*msec {
		t.Fatalf("Cancel of the tail = %v, %v", shift, ok)
	}
	if at, _ := b.Reserve(80*msec, 1, time.Second); at != 300*msec {
		t.Fatalf("Reserve after cancelling the tail ready at %v, want 300ms", at)
	}
}

func TestTokenBucketCancelOfADueReservationChangesNothing(t *testing.T) {
	b := newBucket(t, 10, 1)
	b.TryAcquire(0, 1)
	at, _ := b.Reserve(0, 1, time.Second)
	before := b.word.Load()
	for _, now := range []time.Duration{at, at + msec} {
		if shift, ok := b.Cancel(now, at, 1); ok || shift != 0 {
			t.Fatalf("Cancel at %v of a reservation due at %v = %v, %v; want 0, false", now, at, shift, ok)
		}
	}
	if _, ok := b.Cancel(0, at, 0); ok {
		t.Fatal("Cancel of cost 0 reported a refund")
	}
	if b.word.Load() != before {
		t.Fatal("a refused Cancel moved TAT")
	}
}

func TestTokenBucketConcurrentTakersNeverOverAdmit(t *testing.T) {
	// All goroutines at one instant: exactly the burst is granted.
	b := newBucket(t, 1, 100)
	granted := make(chan int, 8)
	for range 8 {
		go func() {
			n := 0
			for range 50 {
				if ok, _ := b.TryAcquire(0, 1); ok {
					n++
				}
			}
			granted <- n
		}()
	}
	total := 0
	for range 8 {
		total += <-granted
	}
	if total != 100 {
		t.Fatalf("granted %d at one instant from a burst of 100", total)
	}
}

// Callers refused together get turns one interval apart, each at or after
// the exact retryAfter, and each caller that comes back at its turn is
// served; a lone refusal later, once the turns are past, is exact again.
func TestNextTurnSpreadsRefusedCallers(t *testing.T) {
	b := newBucket(t, 10, 2) // 100 ms a permit
	b.TryAcquire(0, 2)
	var turns []time.Duration
	for range 5 {
		ok, exact := b.TryAcquire(0, 1)
		if ok {
			t.Fatal("granted from an empty bucket")
		}
		turn := b.NextTurn(0, 1)
		if turn < exact {
			t.Fatalf("turn %v before the exact retryAfter %v", turn, exact)
		}
		turns = append(turns, turn)
	}
	want := []time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 300 * time.Millisecond, 400 * time.Millisecond, 500 * time.Millisecond}
	if d := cmp.Diff(want, turns); d != "" {
		t.Fatalf("turns (-want +got):\n%s", d)
	}
	for i, at := range turns {
		if ok, _ := b.TryAcquire(at, 1); !ok {
			t.Fatalf("caller %d refused at its turn %v", i, at)
		}
	}
	b.TryAcquire(time.Second, 2) // the bucket is full again: empty it
	ok, exact := b.TryAcquire(time.Second, 1)
	if ok {
		t.Fatal("granted from an empty bucket")
	}
	if turn := b.NextTurn(time.Second, 1); turn != exact {
		t.Errorf("a lone refusal's turn %v, want the exact %v", turn, exact)
	}
}
