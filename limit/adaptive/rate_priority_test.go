package adaptive

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// TestPassedWaiterLeavesAtMaxWait: a background waiter that critical ones
// keep passing never reaches the front, and still leaves, not granted,
// once it has waited MaxWait.
func TestPassedWaiterLeavesAtMaxWait(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 60, 60, 60 // one a second
		c.BurstTime = headroom.Duration(time.Second)
		c.MaxWait = headroom.Duration(10 * time.Second)
	})
	now := time.Duration(0)
	if !take(r, now, 1) {
		t.Fatal("the first unit was refused")
	}
	bg, _, ok := r.EnqueueLevel(now, 16, 0) // 16 units: it would go after 16 s
	if !ok {
		t.Fatal("background waiter refused")
	}
	critical := func() {
		if _, _, ok := r.EnqueueLevel(now, 1, 2); !ok {
			t.Fatalf("critical waiter refused at %v", now)
		}
	}
	critical()
	critical() // two stay queued ahead of it
	for now < 12*time.Second {
		at, ok := r.Next(now)
		if !ok {
			t.Fatal("no next time with waiters queued")
		}
		now = at
		for {
			w, ok := r.Dequeue(now)
			if !ok {
				break
			}
			if w.ID == bg {
				if w.Granted || now != 10*time.Second {
					t.Fatalf("the background waiter left at %v, granted %v; want refused at MaxWait (10s)", now, w.Granted)
				}
				return
			}
			critical()
		}
	}
	t.Fatal("the background waiter never left")
}
