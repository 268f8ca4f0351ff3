package limit

import (
	"sync/atomic"
	"testing"
	"time"
)

// Calibration, measured in the same run as the comparisons: the clock reads
// and an uncontended CAS that the fast paths are made of. This VM's clock
// read is slow and dominates several of them.

var (
	calibSink  int64
	calibEpoch = time.Now()
)

// BenchmarkCalibTimeNow is time.Now(): wall and monotonic clock.
func BenchmarkCalibTimeNow(b *testing.B) {
	var s int64
	for b.Loop() {
		s += time.Now().UnixNano()
	}
	calibSink = s
}

// BenchmarkCalibTimeSince is time.Since of a time with a monotonic reading:
// one monotonic clock read.
func BenchmarkCalibTimeSince(b *testing.B) {
	var s time.Duration
	for b.Loop() {
		s += time.Since(calibEpoch)
	}
	calibSink = int64(s)
}

// BenchmarkCalibCAS is an uncontended compare-and-swap on one word.
func BenchmarkCalibCAS(b *testing.B) {
	var w atomic.Int64
	for b.Loop() {
		v := w.Load()
		w.CompareAndSwap(v, v+1)
	}
	calibSink = w.Load()
}
