package adaptive

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// queuedBehindBackground is a Rate of 10 units a second with its bucket
// spent, 80 critical waiters of a unit each, 20 background ones, and then
// one more critical waiter, whose ID and wait it returns: the share of
// the background lets some of its waiters in ahead of it.
func queuedBehindBackground(t *testing.T) (r *Rate, id uint64, wait time.Duration) {
	t.Helper()
	r = newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 600, 600, 600
		c.BurstTime = headroom.Duration(time.Second)
	})
	for {
		if ok, _ := r.TryAcquire(0, 1); !ok {
			break
		}
	}
	for range 80 {
		if _, _, ok := r.EnqueueLevel(0, 1, 2); !ok {
			t.Fatal("critical waiter refused")
		}
	}
	for range 20 {
		if _, _, ok := r.EnqueueLevel(0, 1, 0); !ok {
			t.Fatal("background waiter refused")
		}
	}
	id, wait, ok := r.EnqueueLevel(0, 1, 2)
	if !ok {
		t.Fatal("critical waiter refused")
	}
	return r, id, wait
}

// TestShedAheadRefusesTheFewestLowerWaitersThatMakeTheDeadline: a
// critical waiter whose wait would pass its deadline has the background
// waiters queued ahead of it taken out, the nearest first, no more than
// it needs to fit.
func TestShedAheadRefusesTheFewestLowerWaitersThatMakeTheDeadline(t *testing.T) {
	r, id, wait := queuedBehindBackground(t)
	if wait < 8200*time.Millisecond {
		t.Fatalf("critical wait %v, want over 8.2 s: 80 critical and some background units ahead (the test needs it)", wait)
	}
	before := r.Len()
	ids, got, ok := r.ShedAhead(0, id, wait-150*time.Millisecond, nil)
	if !ok || got > wait-150*time.Millisecond {
		t.Fatalf("ShedAhead: wait %v, ok %v; want it within %v", got, ok, wait-150*time.Millisecond)
	}
	if len(ids) != 2 || r.Len() != before-2 {
		t.Errorf("took out %v (queue %d → %d), want the 2 units that 150 ms at 10 a second is", ids, before, r.Len())
	}
	if ids[0] < ids[1] {
		t.Errorf("took out %v, want the nearest ahead of the critical waiter first", ids)
	}
}

// TestShedAheadTakesNoneWhenItCannotFit: when taking out every lower
// waiter ahead would not make the deadline, none is taken out.
func TestShedAheadTakesNoneWhenItCannotFit(t *testing.T) {
	r, id, _ := queuedBehindBackground(t)
	before := r.Len()
	ids, _, ok := r.ShedAhead(0, id, time.Millisecond, nil)
	if ok || len(ids) != 0 || r.Len() != before {
		t.Errorf("ShedAhead with 1 ms left: took out %v, ok %v, queue %d → %d; want none, not ok", ids, ok, before, r.Len())
	}
}
