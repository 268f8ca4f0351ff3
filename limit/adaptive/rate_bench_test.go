package adaptive

import (
	"sync"
	"testing"
	"time"
)

func benchRate(b *testing.B, ctl RateController) *Rate {
	c := DefaultRateConfig()
	c.MaxUnitsPerMinute, c.InitialUnitsPerMinute, c.RateController = 1e15, 1e15, ctl
	r, err := NewRate(c, 0)
	if err != nil {
		b.Fatal(err)
	}
	return r
}

// Acquire with units available and nobody queued.
func BenchmarkRateTryAcquire(b *testing.B) {
	r := benchRate(b, AIMD{})
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += 100
		r.TryAcquire(now, 1)
	}
}

// Recording a success: the measured rate and the controller's verdict.
func BenchmarkRateOnSuccess(b *testing.B) {
	for _, bc := range []struct {
		name string
		ctl  RateController
	}{{"AIMD", AIMD{}}, {"Cubic", Cubic{}}} {
		b.Run(bc.name, func(b *testing.B) {
			r := benchRate(b, bc.ctl)
			r.waited = true
			now := time.Duration(0)
			b.ReportAllocs()
			for b.Loop() {
				now += 100
				r.onSuccess(now, now-50, 1)
			}
		})
	}
}

// Recording a throttle inside the cooldown (a burst of 429s).
func BenchmarkRateOnThrottled(b *testing.B) {
	r := benchRate(b, AIMD{})
	r.onThrottled(0, 0, 1, 0)
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += 100
		r.onThrottled(now, now-50, 1, 0)
	}
}

// Recording a throttle that cuts every time (cooldown 0, sent after the cut).
func BenchmarkRateOnThrottledCut(b *testing.B) {
	c := DefaultRateConfig()
	c.DecreaseCooldown, c.MinUnitsPerMinute = -1, 1e-300 // no cooldown
	r, _ := NewRate(c, 0)
	now := time.Duration(0)
	b.ReportAllocs()
	for b.Loop() {
		now += 100
		r.onThrottled(now, now-1, 1, 0)
		if r.rate < 1 {
			r.rate = 1e6
		}
	}
}

// calibration: an uncontended mutex and a monotonic clock read, to scale
// the figures above on a loaded machine.
func BenchmarkCalibrationClockAndMutex(b *testing.B) {
	var mu sync.Mutex
	epoch := time.Now()
	var d time.Duration
	for b.Loop() {
		mu.Lock()
		d += time.Since(epoch)
		mu.Unlock()
	}
	_ = d
}
