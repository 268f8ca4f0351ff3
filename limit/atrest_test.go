package limit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// A limiter is at rest exactly when a fresh one of its options would admit
// the same: its spent permits refilled, none held, nobody waiting.
func TestAtRest(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		perSecond, _ := PerSecond(2, 2)
		perWindow, _ := PerWindow(2, time.Second)
		bulkhead, _ := Concurrency(2)
		adaptive, _ := Adaptive(adaptive.ConcurrencyConfig{Maximum: 10})
		for _, l := range []Limiter{perSecond, perWindow, bulkhead} {
			if !AtRest(l) {
				t.Errorf("%s fresh: not at rest", l.Name())
			}
			lease, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if AtRest(l) {
				t.Errorf("%s with a permit spent: at rest", l.Name())
			}
			lease.Release()
		}
		if !AtRest(bulkhead) {
			t.Error("bulkhead with its permit back: not at rest")
		}
		time.Sleep(499 * time.Millisecond)
		if AtRest(perSecond) {
			t.Error("per_second before its permit is refilled: at rest")
		}
		time.Sleep(time.Millisecond)
		if !AtRest(perSecond) {
			t.Error("per_second refilled: not at rest")
		}
		if AtRest(perWindow) {
			t.Error("per_window with a grant inside the window: at rest")
		}
		time.Sleep(500 * time.Millisecond)
		if !AtRest(perWindow) {
			t.Error("per_window a window after its grant: not at rest")
		}
		if AtRest(adaptive) {
			t.Error("an adaptive limiter at rest: what it learned would be lost")
		}
	})
}
