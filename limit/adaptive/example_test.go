package adaptive_test

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// The rate limiter's core on the caller's clock: a bucket of 10 units at 10
// units a second, a waiter served when its unit is there, and a throttle
// with a Retry-After that cuts the rate (AIMD: × 0.7) and pauses.
func ExampleNewRate() {
	r, err := adaptive.NewRate(adaptive.RateConfig{
		InitialUnitsPerMinute: 600,                            // 10 units a second
		BurstTime:             headroom.Duration(time.Second), // the bucket holds 10 units
	}, 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.TryAcquire(0, 10))
	fmt.Println(r.TryAcquire(0, 1))

	_, wait, queued := r.Enqueue(0, 1)
	at, _ := r.Next(0)
	w, _ := r.Dequeue(at)
	fmt.Println(wait.Round(time.Millisecond), queued, w.Granted)

	// The request's answer, then a throttle: the first ends the slow start,
	// and since the dependency was accepting far less than the rate, the
	// rate halves (no more in one cut); the Retry-After pauses the limiter.
	r.Release(600*time.Millisecond, at, 1, adaptive.Success, 0)
	ch := r.Release(700*time.Millisecond, at, 1, adaptive.Throttled, 2*time.Second)
	fmt.Printf("%.0f units/min, cut %v, paused %v\n", r.Rate(), ch&adaptive.ChangeCut != 0, time.Second < r.PausedUntil())
	// Output:
	// true 0s
	// false 100ms
	// 100ms true true
	// 300 units/min, cut true, paused true
}

// The latency-adaptive limit's core: it holds at Initial until 100
// successes give it a baseline, then a round of calls whose fastest is
// slower than twice the baseline (a queue downstream) cuts it by 10 %.
func ExampleNewConcurrency() {
	c, err := adaptive.NewConcurrency(adaptive.ConcurrencyConfig{Minimum: 2, Initial: 4})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Duration(0)
	for range 100 {
		c.TryAcquire(now, 1)
		now += 10 * time.Millisecond
		c.Release(now, 10*time.Millisecond, 1, adaptive.Success)
	}
	fmt.Println(c.CurrentLimit())

	for range 4 {
		c.TryAcquire(now, 1)
	}
	for range 4 {
		now += 50 * time.Millisecond
		c.Release(now, 50*time.Millisecond, 1, adaptive.Success)
	}
	fmt.Println(c.CurrentLimit())
	// Output:
	// 4 true
	// 3 true
}

// A background reserve: once critical work (level 2) has asked, background
// work (level 0) goes at most at 40% of the rate, here 4 of the 10 units a
// second (and a second of that in its bucket at the start), while critical
// work still has the whole rate.
func ExampleRate_TryAcquireLevel() {
	r, err := adaptive.NewRate(adaptive.RateConfig{
		MinUnitsPerMinute: 600, InitialUnitsPerMinute: 600, MaxUnitsPerMinute: 600,
		BurstTime:         headroom.Duration(time.Second),
		BackgroundReserve: 0.6,
	}, 0)
	if err != nil {
		panic(err)
	}
	r.TryAcquireLevel(0, 1, 2) // critical work asks
	background := 0
	for now := time.Second; now < 11*time.Second; now += 10 * time.Millisecond {
		if ok, _ := r.TryAcquireLevel(now, 1, 0); ok {
			background++
		}
	}
	fmt.Println("background units in 10 s:", background)
	// Output: background units in 10 s: 43
}
