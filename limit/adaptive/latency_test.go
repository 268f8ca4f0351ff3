package adaptive

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"
)

func TestLatencyBucketBounds(t *testing.T) {
	prev := -1
	for _, d := range []time.Duration{0, 1, 7, 8, 9, 15, 16, 17, 100, 1000, 4095, 4096,
		999 * time.Microsecond, time.Millisecond, 20 * time.Millisecond,
		time.Second, time.Minute, latMaxBucketedTime - 1} {
		i := latBucket(d)
		if i < prev {
			t.Errorf("latBucket(%v) = %d, below the previous %d", d, i, prev)
		}
		prev = i
		lo, hi := latBucketBounds(i)
		if d < lo || d >= hi {
			t.Errorf("latBucket(%v) = %d with bounds [%v, %v)", d, i, lo, hi)
		}
		if d >= 8 && float64(hi)/float64(lo) > 1.125+1e-9 {
			t.Errorf("bucket %d [%v, %v) wider than 1/8 of its lower bound", i, lo, hi)
		}
	}
	if i := latBucket(latMaxBucketedTime); i != latBuckets-1 {
		t.Errorf("latBucket(max) = %d, want the top bucket %d", i, latBuckets-1)
	}
	if i := latBucket(time.Hour); i != latBuckets-1 {
		t.Errorf("latBucket(1h) = %d, want the top bucket %d", i, latBuckets-1)
	}
	if i := latBucket(-time.Second); i != 0 {
		t.Errorf("latBucket(-1s) = %d, want 0", i)
	}
}

// The p10 read from the histograms is within a bucket's half-width (±6.25 %)
// of the exact p10 of the same samples, and the baseline in use, which
// follows it down at once and up slowly, is not dragged far below it by the
// noise of the early readings.
func TestLatencyBaselineP10(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, dist := range []struct {
		name string
		draw func() time.Duration
	}{
		{"exponential 20ms", func() time.Duration { return time.Duration(rng.ExpFloat64() * 20e6) }},
		{"uniform 5-15ms", func() time.Duration { return 5*time.Millisecond + time.Duration(rng.Float64()*10e6) }},
		{"lognormal 300µs", func() time.Duration { return time.Duration(300e3 * math.Exp(rng.NormFloat64())) }},
	} {
		var b latencyBaseline
		var all []time.Duration
		for i := range 10_000 {
			d := dist.draw()
			all = append(all, d)
			b.Add(time.Duration(i)*time.Millisecond, d) // 10 s: one slice
		}
		slices.Sort(all)
		exact := all[int(math.Ceil(0.1*float64(len(all))))-1]
		if r := float64(b.Measured()) / float64(exact); r < 0.9375 || r > 1.0625 {
			t.Errorf("%s: measured p10 %v, exact %v (ratio %.3f)", dist.name, b.Measured(), exact, r)
		}
		got, ok := b.Value()
		if !ok {
			t.Fatalf("%s: no baseline after 10000 samples", dist.name)
		}
		if r := float64(got) / float64(exact); r < 0.85 || r > 1.0625 {
			t.Errorf("%s: baseline %v, exact p10 %v (ratio %.3f)", dist.name, got, exact, r)
		}
	}
}

func TestLatencyBaselineWarmup(t *testing.T) {
	var b latencyBaseline
	for i := range latWarmup - 1 {
		b.Add(time.Duration(i)*time.Millisecond, 10*time.Millisecond)
		if _, ok := b.Value(); ok {
			t.Fatalf("baseline after %d samples, want none before %d", i+1, latWarmup)
		}
	}
	b.Add(time.Second, 10*time.Millisecond)
	v, ok := b.Value()
	if !ok || v < 9500*time.Microsecond || v > 10500*time.Microsecond {
		t.Fatalf("after %d samples Value() = %v, %v; want ≈10ms, true", latWarmup, v, ok)
	}
}

// feed adds samples of latency d every step from from to to.
func latFeed(b *latencyBaseline, from, to, step, d time.Duration) {
	for now := from; now < to; now += step {
		b.Add(now, d)
	}
}

// The window forgets what is older than five minutes; the baseline follows
// a faster dependency down at once.
func TestLatencyBaselineFallsAtOnce(t *testing.T) {
	var b latencyBaseline
	latFeed(&b, 0, 5*time.Minute, 10*time.Millisecond, 10*time.Millisecond)
	// One full window of 2 ms calls: the old ones have all left it.
	latFeed(&b, 5*time.Minute, 10*time.Minute+latSliceWidth, 10*time.Millisecond, 2*time.Millisecond)
	if v, _ := b.Value(); v < 1900*time.Microsecond || v > 2100*time.Microsecond {
		t.Fatalf("baseline %v after five minutes of 2ms calls, want ≈2ms", v)
	}
	// 10 % of fast calls are enough to hold the p10 down.
	var c latencyBaseline
	latFeed(&c, 0, time.Minute, 10*time.Millisecond, 2*time.Millisecond)
	for now := time.Minute; now < 4*time.Minute; now += time.Millisecond {
		d := 50 * time.Millisecond
		if now%(10*time.Millisecond) == 0 {
			d = 2 * time.Millisecond
		}
		c.Add(now, d)
	}
	if v := c.Measured(); v > 2100*time.Microsecond {
		t.Fatalf("measured p10 %v with 10%% of calls at 2ms, want ≈2ms", v)
	}
}

// The drift guardrail: a dependency that stays five times slower for 30
// minutes moves the baseline by at most ×√2, and a permanent slowdown is
// accepted once the ×2-an-hour ceiling has climbed to it.
func TestLatencyBaselineRiseIsBounded(t *testing.T) {
	var b latencyBaseline
	latFeed(&b, 0, 5*time.Minute, 10*time.Millisecond, 10*time.Millisecond)
	b0, _ := b.Value()
	start := 5 * time.Minute
	latFeed(&b, start, start+30*time.Minute, 10*time.Millisecond, 50*time.Millisecond)
	v, _ := b.Value()
	if m := b.Measured(); m < 45*time.Millisecond {
		t.Fatalf("measured p10 %v after 30 minutes of 50ms calls, want ≈50ms", m)
	}
	if limit := time.Duration(float64(b0) * math.Sqrt2 * 1.001); v > limit {
		t.Fatalf("baseline rose from %v to %v in 30 minutes; the rule allows at most %v", b0, v, limit)
	}
	// The p10 only moves once 90 % of the window is slow (4.5 minutes in),
	// so the ceiling has climbed for about 25.5 minutes: ×2^(25.5/60) ≈ 1.34.
	if v < time.Duration(float64(b0)*1.3) {
		t.Fatalf("baseline %v after 30 minutes, want the ceiling ≈%v", v, time.Duration(float64(b0)*1.34))
	}
	// log2(5) ≈ 2.32 hours after the slowdown began it is accepted.
	latFeed(&b, start+30*time.Minute, start+150*time.Minute, 10*time.Millisecond, 50*time.Millisecond)
	if v, _ := b.Value(); v != b.Measured() {
		t.Fatalf("baseline %v, measured %v after 2.5 hours: want the slowdown accepted", v, b.Measured())
	}
}

func TestLatencyBaselineQuietWindowKeepsValue(t *testing.T) {
	var b latencyBaseline
	latFeed(&b, 0, time.Minute, 10*time.Millisecond, 10*time.Millisecond)
	before, _ := b.Value()
	// An hour of silence, then a handful of fast calls: too few to read.
	latFeed(&b, time.Hour, time.Hour+10*time.Millisecond, time.Millisecond, time.Millisecond)
	if v, ok := b.Value(); !ok || v != before {
		t.Fatalf("after a quiet hour and 10 calls: %v, %v; want the last value %v", v, ok, before)
	}
	if b.total != 10 {
		t.Fatalf("window holds %d samples after an hour of silence and 10 calls, want 10", b.total)
	}
}

func TestLatencyBaselineBoundedMemory(t *testing.T) {
	if s := unsafe.Sizeof(latencyBaseline{}); s > 16<<10 {
		t.Fatalf("latencyBaseline is %d bytes, want at most 16 KiB", s)
	}
	var b latencyBaseline
	now := time.Duration(0)
	if n := testing.AllocsPerRun(1000, func() {
		now += time.Millisecond
		b.Add(now, time.Duration(now%(20*time.Millisecond)))
	}); n != 0 {
		t.Fatalf("Add allocates %v times per call", n)
	}
}

// BenchmarkLatencyBaselineAdd records latencies drawn beforehand (so the
// draw is not timed) from an exponential around 20 ms.
func BenchmarkLatencyBaselineAdd(b *testing.B) {
	var lb latencyBaseline
	rng := rand.New(rand.NewPCG(1, 2))
	var draws [1024]time.Duration
	for i := range draws {
		draws[i] = time.Duration(rng.ExpFloat64() * 20e6)
	}
	var now time.Duration
	i := 0
	for b.Loop() {
		now += 100 * time.Microsecond
		lb.Add(now, draws[i%len(draws)])
		i++
	}
}

// The p10 found by walking from the last reading is the one a scan of the
// whole window finds, however the window moves: samples that jump across
// octaves, slices that expire, silences that empty the window.
func TestLatencyBaselineWalkMatchesScan(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var b latencyBaseline
	var now time.Duration
	for i := range 200_000 {
		now += time.Duration(rng.ExpFloat64() * float64(5*time.Millisecond))
		if i%50_000 == 0 {
			now += 7 * time.Minute // the whole window expires
		}
		scale := []float64{1e3, 1e5, 2e7, 3e9}[(i/3_000)%4]
		b.Add(now, time.Duration(rng.ExpFloat64()*scale))
		if i%97 != 0 || b.total == 0 {
			continue
		}
		got := b.quantile(latQuantile)
		if want := scanQuantile(&b, latQuantile); got != want {
			t.Fatalf("sample %d: walked p10 %v, scanned %v", i, got, want)
		}
	}
}

// scanQuantile is quantile the slow way, from the raw slices.
func scanQuantile(b *latencyBaseline, q float64) time.Duration {
	var sum [latBuckets]uint64
	var total uint64
	for s := range b.slices {
		for i, c := range b.slices[s] {
			sum[i] += uint64(c)
			total += uint64(c)
		}
	}
	rank := max(uint64(math.Ceil(q*float64(total))), 1)
	var acc uint64
	for i, c := range sum {
		if acc += c; acc >= rank {
			lo, hi := latBucketBounds(i)
			return lo + (hi-lo)/2
		}
	}
	return -1
}
