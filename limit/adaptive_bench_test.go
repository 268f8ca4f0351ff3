package limit

import (
	"testing"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// BenchmarkAdaptiveAcquireRelease is Acquire+Release with the sampling
// (two monotonic clock reads, the round and the baseline), serial.
func BenchmarkAdaptiveAcquireRelease(b *testing.B) { benchAcquireRelease(b, benchAdaptive(b)) }

func BenchmarkAdaptiveAcquireReleaseParallel(b *testing.B) {
	benchAcquireReleaseParallel(b, benchAdaptive(b))
}

func benchAdaptive(b *testing.B) Limiter {
	l, err := Adaptive(adaptive.ConcurrencyConfig{})
	if err != nil {
		b.Fatal(err)
	}
	return l
}
