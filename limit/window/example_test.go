package window_test

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit/window"
)

// Two permits a second with a burst of two, on the caller's clock: the
// bucket starts full, and a refusal says exactly when to come back.
func ExampleNewTokenBucket() {
	b, err := window.NewTokenBucket(2, 2)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, now := range []time.Duration{0, 0, 0, 500 * time.Millisecond} {
		ok, retryAfter := b.TryAcquire(now, 1)
		fmt.Println(now, ok, retryAfter)
	}
	// Output:
	// 0s true 0s
	// 0s true 0s
	// 0s false 500ms
	// 500ms true 0s
}

// Three permits in any minute, sliding in six steps of 10 s: a permit is
// free again a full minute after it was taken, whatever the alignment.
func ExampleNewSlidingWindow() {
	w, err := window.NewSlidingWindow(3, time.Minute, 6)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, take := range []struct {
		now  time.Duration
		cost int
	}{{0, 2}, {20 * time.Second, 1}, {30 * time.Second, 1}, {time.Minute, 2}} {
		ok, retryAfter := w.TryAcquire(take.now, take.cost)
		fmt.Println(take.now, take.cost, ok, retryAfter)
	}
	// Output:
	// 0s 2 true 0s
	// 20s 1 true 0s
	// 30s 1 false 30s
	// 1m0s 2 true 0s
}
