// Package calib holds the calibration benchmarks that every comparison of
// the module's fast paths runs beside itself: the clock reads and the
// uncontended compare-and-swap those paths are made of, measured in the
// same run, since a VM's clock can cost more than the rest of a path.
// Each package's benchmark file calls them from a Benchmark of its own.
package calib

import (
	"sync/atomic"
	"testing"
	"time"
)

// Sink keeps what the loops compute, so that the compiler cannot drop them.
var Sink int64

var epoch = time.Now()

// TimeNow measures time.Now(): the wall and the monotonic clock.
func TimeNow(b *testing.B) {
	var s int64
	for b.Loop() {
		s += time.Now().UnixNano()
	}
	Sink = s
}

// TimeSince measures time.Since of a time with a monotonic reading: one
// monotonic clock read, what the limiters read.
func TimeSince(b *testing.B) {
	var s time.Duration
	for b.Loop() {
		s += time.Since(epoch)
	}
	Sink = int64(s)
}

// CAS measures an uncontended compare-and-swap on one word.
func CAS(b *testing.B) {
	var w atomic.Int64
	for b.Loop() {
		v := w.Load()
		w.CompareAndSwap(v, v+1)
	}
	Sink = w.Load()
}
