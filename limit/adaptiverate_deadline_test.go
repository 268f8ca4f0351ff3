package limit

import (
	"context"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// TestAdaptiveRateDeadlineShedsTheLowerLevelAhead: at one unit a second,
// 40 critical waiters and then two background ones queue; the share of
// the background lets both in ahead of a critical newcomer, whose wait of
// about 43 s would pass its deadline of 42.5 s. The nearer background
// waiter is refused as shed, and the newcomer is served in time.
func TestAdaptiveRateDeadlineShedsTheLowerLevelAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := AdaptiveRate(adaptive.RateConfig{MinUnitsPerMinute: 60, InitialUnitsPerMinute: 60, MaxUnitsPerMinute: 60}, WithQueueLimit(100))
		if err != nil {
			t.Fatal(err)
		}
		held := mustAcquire(t, l, 1)
		defer held.Release()
		out := make(chan served, 50)
		queueAt(t.Context(), l, out, 0, slices.Repeat([]Priority{Critical}, 40)...)
		queueAt(t.Context(), l, out, 40, Background, Background)
		ctx, cancel := context.WithTimeout(t.Context(), 42500*time.Millisecond)
		defer cancel()
		start := time.Now()
		queueAt(ctx, l, out, 42, Critical)
		if r := <-out; r.id != 41 {
			t.Fatalf("waiter %d left first (%v); want the nearer background one shed", r.id, r.err)
		} else {
			refusal(t, r.err, telemetry.ReasonShed, 0)
		}
		for range 42 {
			r := <-out
			if r.err != nil {
				t.Fatalf("waiter %d: %v", r.id, r.err)
			}
			r.lease.Release()
			if r.id == 42 && time.Since(start) > 42500*time.Millisecond {
				t.Errorf("the critical newcomer was served after %v, past its deadline", time.Since(start))
			}
		}
	})
}
