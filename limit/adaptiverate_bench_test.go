package limit

import (
	"testing"

	"github.com/headroom-go/headroom/limit/adaptive"
)

func benchAdaptiveRate(b *testing.B) *AdaptiveRateLimiter {
	l, err := AdaptiveRate(adaptive.RateConfig{MaxUnitsPerMinute: 1e15, InitialUnitsPerMinute: 1e15})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(l.Close)
	return l
}

// Acquire and Release with units available and nobody queued (the release
// records a success).
func BenchmarkAdaptiveRateAcquireRelease(b *testing.B) { benchAcquireRelease(b, benchAdaptiveRate(b)) }

// Release of a throttled lease: recording a throttle (inside the cooldown
// after the first, as in a burst of 429s). Each round releases a lease of
// its own, made as a grant makes it (all granted at one instant): a copy of
// one lease would free nothing after the first.
func BenchmarkAdaptiveRateReleaseThrottled(b *testing.B) {
	l := benchAdaptiveRate(b)
	granted := l.now()
	b.ReportAllocs()
	for b.Loop() {
		le := newLease(&l.self, granted, 1)
		le.Report(adaptive.Throttled, 0)
		le.Release()
	}
}

// Release of a successful lease: recording a success.
func BenchmarkAdaptiveRateReleaseSuccess(b *testing.B) {
	l := benchAdaptiveRate(b)
	granted := l.now()
	b.ReportAllocs()
	for b.Loop() {
		le := newLease(&l.self, granted, 1)
		le.Release()
	}
}

func BenchmarkAdaptiveRateAcquireReleaseParallel(b *testing.B) {
	benchAcquireReleaseParallel(b, benchAdaptiveRate(b))
}
