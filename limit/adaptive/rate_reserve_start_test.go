package adaptive

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// flood drives r from start to end: critical work asks for a unit every
// critEvery and background work for one every 10 ms, each success
// released at once; it returns the background units granted.
func flood(r *Rate, start, end, critEvery time.Duration) int {
	bg := 0
	for now := start; now < end; now += 10 * time.Millisecond {
		if (now-start)%critEvery == 0 {
			if ok, _ := r.TryAcquireLevel(now, 1, 2); ok {
				r.Release(now, now, 1, Success, 0)
			}
		}
		if ok, _ := r.TryAcquireLevel(now, 1, 0); ok {
			bg++
			r.Release(now, now, 1, Success, 0)
		}
	}
	return bg
}

// TestReserveHeldBackgroundDoesNotRaiseTheRate: background work that only
// the reserve holds, while the bucket has room, is not demand the rate
// failed to meet: a slow start does not climb on it.
func TestReserveHeldBackgroundDoesNotRaiseTheRate(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 60, 600, 60000 // from 10 a second
		c.BurstTime = headroom.Duration(time.Second)
		c.BackgroundReserve = 0.6
	})
	flood(r, 0, 30*time.Second, 500*time.Millisecond) // critical: 2 a second
	if got := r.Rate(); got != 600 {
		t.Errorf("rate %v after 30 s of background held by the reserve alone, want the initial 600", got)
	}
}

// TestUntriedRateKeepsBackgroundToItsShare: while a slow start's rate is
// above the initial one and nothing has tried it, background work goes at
// (1 − BackgroundReserve) / BackgroundReserve of critical work's pace, or
// its share of the initial rate, not at its share of the rate; once a
// published quota has tried the rate, at its share of the rate.
func TestUntriedRateKeepsBackgroundToItsShare(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 60, 60, 60000 // from 1 a second
		c.BurstTime = headroom.Duration(time.Second)
		c.BackgroundReserve = 0.5
	})
	r.setRate(0, 6000) // a slow start that climbed to 100 a second on what was asked
	// critical: 5 a second; background: its share, 5 a second, not 50
	if got := flood(r, 0, 10*time.Second, 200*time.Millisecond); got < 40 || got > 60 {
		t.Errorf("untried: background took %d units in 10 s, want about 50: as much as critical work", got)
	}
	r.SetPublishedLimit(10*time.Second, 6000, time.Minute) // tried: 100 a second
	if got := flood(r, 11*time.Second, 21*time.Second, 200*time.Millisecond); got < 480 || got > 545 {
		t.Errorf("tried: background took %d units in 10 s, want about 540: half of the 98 a second the quota allows, and a bucket of it", got)
	}
}
