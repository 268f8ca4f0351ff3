package limit

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

func TestAdaptiveRatePublishedLimit(t *testing.T) {
	l := newTestAdaptiveRate(t, adaptive.RateConfig{Controller: "cubic", InitialUnitsPerMinute: 1200, Instances: 2})
	l.SetPublishedLimit(100, 6*time.Second) // 1,000 a minute
	if l.State().Rate != 490 || l.State().MaxRate != 490 || l.State().PublishedLimit != 1000 {
		t.Fatalf("rate %v, max %v, published %v; want 490, 490, 1000", l.State().Rate, l.State().MaxRate, l.State().PublishedLimit)
	}
	l.SetInstances(1)
	if l.State().Rate != 980 || l.State().MaxRate != 980 {
		t.Fatalf("one instance: rate %v, max %v", l.State().Rate, l.State().MaxRate)
	}
	l.SetPublishedLimit(0, 0)
	if l.State().Rate != 980 || l.State().MaxRate != adaptive.DefaultRateConfig().MaxUnitsPerMinute || l.State().PublishedLimit != 0 {
		t.Fatalf("no quota: rate %v, max %v", l.State().Rate, l.State().MaxRate)
	}
	l.SetPublishedLimit(100, 0) // no window: no rate
	if l.State().PublishedLimit != 0 {
		t.Fatalf("a limit without a window: published %v", l.State().PublishedLimit)
	}

	l = newTestAdaptiveRate(t, adaptive.RateConfig{InitialUnitsPerMinute: 1200, PublishedLimitFraction: 0.5})
	l.SetPublishedLimit(1000, time.Minute)
	if l.State().Rate != 500 {
		t.Fatalf("fraction 0.5: rate %v", l.State().Rate)
	}
	err := (&Options{AdaptiveRate: &adaptive.RateConfig{PublishedLimitFraction: 2}}).Validate()
	if err == nil || !strings.Contains(err.Error(), "AdaptiveRate.PublishedLimitFraction =") {
		t.Fatalf("validate: %v", err)
	}
}

// A lower cap slows a waiter already queued: the timer is set again.
func TestAdaptiveRatePublishedLimitReschedulesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestAdaptiveRate(t, adaptive.RateConfig{InitialUnitsPerMinute: 600, BurstTime: headroom.Duration(time.Second), MaxUnitsPerMinute: 600})
		// The first request takes the whole bucket of 10; the second waits for
		// its unit. (A first quota given fills the bucket: give one and take
		// it away before.)
		l.SetPublishedLimit(600/0.98, time.Second)
		l.SetPublishedLimit(0, 0)
		ctx := context.Background()
		if _, err := l.AcquireN(ctx, 10); err != nil { // the whole bucket
			t.Fatal(err)
		}
		start := time.Now()
		done := make(chan time.Duration)
		go func() {
			le, err := l.AcquireN(ctx, 1)
			if err != nil {
				t.Error(err)
			}
			le.Release()
			done <- time.Since(start)
		}()
		synctest.Wait()
		l.SetPublishedLimit(150/0.98, time.Minute)                                                    // 150 a minute: 2.5 a second
		if got := <-done; got < 400*time.Millisecond || got > 400*time.Millisecond+time.Microsecond { // durations round up to the nanosecond
			// One unit at 2.5 a second, not the 100 ms of the old rate.
			t.Fatalf("waited %v, want 400ms", got)
		}
	})
}
