package limit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// TestAdaptiveRateHoldsBackgroundOutOfTheReserve: background callers that
// want more than the rate get half of it once critical work has asked
// (the reserve is half), and a critical caller that comes while they wait
// goes within a unit's time, ahead of them.
func TestAdaptiveRateHoldsBackgroundOutOfTheReserve(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := AdaptiveRate(adaptive.RateConfig{
			MinUnitsPerMinute: 600, InitialUnitsPerMinute: 600, MaxUnitsPerMinute: 600, // 10 a second
			BurstTime:         headroom.Duration(time.Second),
			BackgroundReserve: 0.5,
		})
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		critical := WithPriority(context.Background(), Critical)
		background := WithPriority(context.Background(), Background)
		if _, err := l.Acquire(critical); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		granted := make(chan struct{}, 1000)
		ctx, stop := context.WithCancel(background)
		done := make(chan struct{})
		for range 4 {
			go func() {
				defer func() { done <- struct{}{} }()
				for {
					if _, err := l.Acquire(ctx); err != nil {
						return
					}
					granted <- struct{}{}
				}
			}()
		}
		time.Sleep(5 * time.Second)
		asked := time.Now()
		if _, err := l.Acquire(critical); err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(asked); waited > 200*time.Millisecond {
			t.Errorf("critical caller waited %v behind background work held to half the rate", waited)
		}
		time.Sleep(time.Until(start.Add(10 * time.Second)))
		stop()
		for range 4 {
			<-done
		}
		// Half of 10 a second for 10 s, and the reserve's bucket (a
		// second of it) at the start.
		if n := len(granted); n < 45 || n > 56 {
			t.Errorf("background took %d units in 10 s, want about 50: half the rate of 10 a second", n)
		}
	})
}
