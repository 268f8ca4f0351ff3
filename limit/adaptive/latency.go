package adaptive

import (
	"math"
	"math/bits"
	"time"
)

// The latency baseline: what a fast call to the dependency looks like. It is
// the 10th percentile of the latencies of the last five minutes, held in
// bounded memory:
//
//   - latSlices time slices of latSliceWidth each (10 × 30 s = 5 min), each
//     a fixed-size histogram with latBuckets log-spaced buckets, 8 to an
//     octave (each octave split linearly, so a bucket is at most 1/8 of its
//     lower bound wide and a percentile read at its midpoint is within
//     ±6.25 % of the exact one). The oldest slice is dropped whole
//     when time moves into a new one, so the window covers the last 4.5 to
//     5 minutes.
//   - A running sum of the live slices, and the p10's bucket in it with the
//     count of samples below, kept as samples arrive and slices leave. A
//     reading walks from the last p10 instead of scanning, once per
//     latRecomputeEvery samples (or on rotation). Recording a sample is
//     O(1); dropping a slice is O(latBuckets) once every 30 s. Nothing
//     allocates.
//
// The guardrail against drift (reported against failsafe-go's adaptive
// limiter: in a long incident an
// averaged baseline creeps up to the slow latency, the queueing signal
// vanishes and the limiter stops decreasing). The baseline in use is the
// measured p10 capped by a ceiling, and the ceiling moves toward the
// measured p10 by at most a factor of two per hour of elapsed time
// (latRiseDoubling), continuously compounded, in either direction:
//
//	baseline = min(p10, ceiling)
//	ceiling  = clamp(p10, ceiling / 2^(Δt/1h), ceiling × 2^(Δt/1h))
//
// So the baseline falls at once with the p10 and comes back up at once
// after a dip (noise does not ratchet it down), but a p10 that stays high
// lifts it by at most ×√2 ≈ 1.41 in 30 minutes, and the round's fastest
// call keeps looking slow against it. A dependency that has become slower
// for good is accepted in at most log2(slowdown) hours, the limit meanwhile
// held low but never below Minimum, which keeps the recovery sampled.
//
// One more rule stops the slow drift of a limiter that sits in overload for
// hours: its limit saws around the dependency's capacity, so nearly every
// sample carries a little queueing and the p10 reads high. The engine calls
// HoldRise when a round cuts the limit above Minimum (the loop is working:
// it sees queueing and can act on it), and the ceiling may not rise at the
// next reading. Only a limiter pinned at Minimum, or one that is not
// cutting, lets the ceiling climb.
const (
	latSliceWidth      = 30 * time.Second
	latSlices          = 10
	latSub             = 3 // log2 of the buckets per octave
	latBuckets         = 288
	latWarmup          = 100 // samples before there is a baseline
	latRecomputeEvery  = 64  // samples between reads of the p10
	latQuantile        = 0.10
	latRiseDoubling    = time.Hour
	latMaxBucketedTime = time.Duration(1) << 38 // ≈ 275 s; slower samples share the top bucket
)

// latencyBaseline estimates what a fast call looks like: the 10th percentile
// of the latencies of the last five minutes, under a ceiling that moves at
// most ×2 an hour (see the constants above for the rule and its reason). Its methods take
// the current time on the caller's monotonic axis; it reads no clock. The
// zero value is ready to use. It is not safe for concurrent use.
type latencyBaseline struct {
	slices   [latSlices][latBuckets]uint32
	sum      [latBuckets]uint32
	total    uint64        // samples in the live slices
	seen     uint64        // samples ever
	epoch    int64         // index of the current slice: now / latSliceWidth
	cur      int           // epoch % latSlices, the slice being filled
	sliceEnd time.Duration // when the current slice ends: (epoch+1) × latSliceWidth
	// p10 and below locate the p10 in sum without a scan: the bucket that
	// held it at the last reading, and the samples in the buckets under it.
	p10      int
	below    uint64
	pending  int           // samples since the last read of the p10
	rotated  bool          // a slice was dropped since the last read
	measured time.Duration // p10 of the window, last read
	value    time.Duration // min(measured, ceiling)
	ceiling  time.Duration
	at       time.Duration // when the ceiling last moved
	known    bool
	noRise   bool // HoldRise since the last reading
	// doubling is latRiseDoubling; tests set a negative value to turn the
	// guardrail off and watch the drift it prevents.
	doubling time.Duration
}

// Add records the latency of one call that ended at now.
func (b *latencyBaseline) Add(now, latency time.Duration) {
	if now >= b.sliceEnd {
		b.rotate(now)
	}
	i := latBucket(latency)
	b.slices[b.cur][i]++
	b.sum[i]++
	if i < b.p10 {
		b.below++
	}
	b.total++
	b.seen++
	b.pending++
	if b.pending >= latRecomputeEvery || b.rotated || (!b.known && b.seen >= latWarmup) {
		b.update(now)
	}
}

// HoldRise keeps the ceiling from rising at the next reading of the p10.
func (b *latencyBaseline) HoldRise() { b.noRise = true }

// Value is the baseline in use, min(p10, ceiling), and whether there is one
// yet: there is none until latWarmup (100) calls have been recorded.
func (b *latencyBaseline) Value() (time.Duration, bool) { return b.value, b.known }

// Measured is the p10 of the live window as last read, before the ceiling
// caps it; 0 until there is a baseline.
func (b *latencyBaseline) Measured() time.Duration { return b.measured }

// rotate drops the slices that have left the window by now and moves to
// the slice now falls in. Time that runs backwards is ignored.
func (b *latencyBaseline) rotate(now time.Duration) {
	e := int64(now / latSliceWidth)
	if e > b.epoch {
		for k := range min(e-b.epoch, latSlices) {
			b.drop(int((b.epoch + 1 + k) % latSlices))
		}
		b.epoch, b.cur = e, int(e%latSlices)
	}
	b.sliceEnd = time.Duration(b.epoch+1) * latSliceWidth
}

// drop empties slice s, taking its samples out of the window.
func (b *latencyBaseline) drop(s int) {
	for i, c := range b.slices[s] {
		if c == 0 {
			continue
		}
		b.sum[i] -= c
		b.total -= uint64(c)
		if i < b.p10 {
			b.below -= uint64(c)
		}
		b.slices[s][i] = 0
		b.rotated = true
	}
}

// update reads the p10 of the window, moves the ceiling toward it by at
// most ×2 per latRiseDoubling, and sets the baseline to the lower of the
// two. With fewer than latWarmup samples in the window (after a quiet spell)
// it keeps the last value.
func (b *latencyBaseline) update(now time.Duration) {
	b.pending, b.rotated = 0, false
	if b.total < latWarmup {
		return
	}
	p := b.quantile(latQuantile)
	b.measured = p
	noRise := b.noRise
	b.noRise = false
	if !b.known || b.doubling < 0 {
		b.ceiling, b.at = p, now
	} else if p > b.ceiling && noRise {
		b.at = now
	} else if dt := now - b.at; dt > 0 {
		d := b.doubling
		if d == 0 {
			d = latRiseDoubling
		}
		f := math.Exp2(float64(dt) / float64(d))
		c := float64(b.ceiling)
		b.ceiling = time.Duration(min(max(float64(p), c/f), c*f))
		b.at = now
	}
	b.value, b.known = min(p, b.ceiling), true
}

// quantile is the q-quantile of the live window: the midpoint of the bucket
// holding the sample of rank ceil(q × total). It walks from the bucket of
// the last reading, which a window that moves slowly keeps near, so a
// reading costs a few steps rather than a scan of the histogram.
func (b *latencyBaseline) quantile(q float64) time.Duration {
	rank := max(uint64(math.Ceil(q*float64(b.total))), 1)
	for b.p10 > 0 && b.below >= rank {
		b.p10--
		b.below -= uint64(b.sum[b.p10])
	}
	for b.below+uint64(b.sum[b.p10]) < rank && b.p10 < latBuckets-1 {
		b.below += uint64(b.sum[b.p10])
		b.p10++
	}
	lo, hi := latBucketBounds(b.p10)
	return lo + (hi-lo)/2
}

// latBucket maps a latency to its histogram bucket: values below 8 ns have
// a bucket each; above, each octave [2^k, 2^(k+1)) splits into 8 buckets by
// the three bits below the leading one (the HDR-histogram layout).
func latBucket(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	v := uint64(d)
	if v < 1<<latSub {
		return int(v)
	}
	n := bits.Len64(v) // ≥ 4
	i := (n-latSub)<<latSub | int(v>>(n-latSub-1)&(1<<latSub-1))
	return min(i, latBuckets-1)
}

// latBucketBounds is bucket i's range [lo, hi).
func latBucketBounds(i int) (lo, hi time.Duration) {
	if i < 1<<latSub {
		return time.Duration(i), time.Duration(i + 1)
	}
	n := i>>latSub + latSub
	m := i & (1<<latSub - 1)
	shift := n - latSub - 1
	return time.Duration((1<<latSub + m) << shift), time.Duration((1<<latSub + m + 1) << shift)
}
