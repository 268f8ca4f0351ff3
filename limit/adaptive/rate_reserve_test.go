package adaptive

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
)

// TestBackgroundNeverTakesTheReserve is the reserve's property: from the
// moment critical work asks, and as long as it goes on asking within the
// lending minute, background work is granted at most 1 − BackgroundReserve
// of the rate (and a bucket of it, and one request's units), whatever the
// arrivals, costs, rates and reserves; and critical work is never held by
// it. Release is never called, so the rate stays where it was set.
func TestBackgroundNeverTakesTheReserve(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		rng := rand.New(rand.NewPCG(seed, 7))
		perMinute := 60 + rng.Float64()*6000
		f := 0.05 + rng.Float64()*0.9
		r := newTestRate(t, func(c *RateConfig) {
			c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = perMinute, perMinute, perMinute
			c.BurstTime = headroom.Duration(time.Second)
			c.MaxWait = headroom.Duration(time.Hour)
			c.BackgroundReserve = f
		})
		levels := map[uint64]int{}
		var (
			now       time.Duration
			firstCrit = time.Duration(-1)
			bgUnits   float64 // background units granted since firstCrit
			maxCost   = 1 + rng.IntN(5)
		)
		granted := func(level, cost int) {
			if level == 0 && firstCrit >= 0 {
				bgUnits += float64(cost)
				pace := (1 - f) * perMinute / float64(time.Minute)
				bound := pace*float64(now-firstCrit) + max(pace*float64(time.Second), 1) + float64(maxCost) + 1e-6
				if bgUnits > bound {
					t.Fatalf("seed %d: background took %.1f units in %v after critical work asked, at most %.1f at %.0f%% of %.0f a minute", seed, bgUnits, now-firstCrit, bound, 100*(1-f), perMinute)
				}
			}
		}
		ask := func(level int) {
			cost := 1 + rng.IntN(maxCost)
			if level == 2 && firstCrit < 0 {
				firstCrit = now
			}
			if ok, _ := r.TryAcquireLevel(now, cost, level); ok {
				granted(level, cost)
				return
			}
			id, _, ok := r.EnqueueLevel(now, cost, level)
			if !ok {
				t.Fatalf("seed %d: refused with an hour's MaxWait", seed)
			}
			levels[id] = level
		}
		drain := func() {
			for {
				w, ok := r.Dequeue(now)
				if !ok {
					return
				}
				if !w.Granted {
					t.Fatalf("seed %d: a waiter left ungranted with an hour's MaxWait", seed)
				}
				granted(levels[w.ID], w.Cost)
				delete(levels, w.ID)
			}
		}
		for now < 50*time.Second {
			now += time.Duration(rng.ExpFloat64() * float64(200*time.Millisecond))
			drain()
			switch rng.IntN(4) {
			case 0:
				if now > 5*time.Second {
					ask(2)
				}
			default:
				ask(0)
			}
			if at, ok := r.Next(now); ok && at < now+time.Duration(rng.IntN(int(time.Second))) {
				now = at
				drain()
			}
		}
	}
}

// TestReserveLentWhileNobodyAbove: with no critical work, background work
// goes at the whole rate; once critical work asks it is held to its share,
// and after a minute without critical work the reserve is lent again.
func TestReserveLentWhileNobodyAbove(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 600, 600, 600 // 10 a second
		c.BurstTime = headroom.Duration(time.Second)
		c.BackgroundReserve = 0.6
	})
	// units background work takes in the ten seconds from start, asking a
	// unit every 10 ms (100 a second, more than the rate)
	background := func(start time.Duration) int {
		n := 0
		for now := start; now < start+10*time.Second; now += 10 * time.Millisecond {
			if ok, _ := r.TryAcquireLevel(now, 1, 0); ok {
				n++
			}
		}
		return n
	}
	if got := background(0); got < 100 || got > 111 {
		t.Errorf("no critical work: background took %d units in 10 s at 10 a second, want the whole rate", got)
	}
	if ok, _ := r.TryAcquireLevel(10*time.Second, 1, 2); !ok {
		t.Fatal("critical unit refused with the bucket refilled")
	}
	if got := background(11 * time.Second); got < 38 || got > 46 {
		t.Errorf("critical work asking: background took %d units in 10 s, want 40%% of 100", got)
	}
	if got := background(71 * time.Second); got < 100 || got > 111 {
		t.Errorf("a minute after critical work: background took %d units in 10 s, want the whole rate lent", got)
	}
}

// TestBackgroundPacedAtTheLastPublishedRate: once the server stops
// publishing, the controller's rate is no longer capped, but background
// work goes at its share of the rate the last published quota allowed.
func TestBackgroundPacedAtTheLastPublishedRate(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 60, 6000, 6000
		c.BurstTime = headroom.Duration(time.Second)
		c.BackgroundReserve = 0.5
		c.PublishedLimitFraction = 1
	})
	r.SetPublishedLimit(0, 600, time.Minute) // 10 a second
	r.SetPublishedLimit(0, 0, 0)             // silent: the cap is gone
	r.setRate(0, 3000)                       // and the controller learns on above it
	if got := r.Rate(); got <= 600 {
		t.Fatalf("rate %v after the quota went silent, want above 600 (the test needs it)", got)
	}
	if ok, _ := r.TryAcquireLevel(0, 1, 2); !ok {
		t.Fatal("critical unit refused")
	}
	n := 0
	for now := time.Second; now < 11*time.Second; now += 10 * time.Millisecond {
		if ok, _ := r.TryAcquireLevel(now, 1, 0); ok {
			n++
		}
	}
	if n < 48 || n > 56 {
		t.Errorf("background took %d units in 10 s, want about 50: half of the 10 a second last published", n)
	}
}

func TestBackgroundReserveValidated(t *testing.T) {
	for _, f := range []float64{-0.1, 1, 1.5} {
		c := DefaultRateConfig()
		c.BackgroundReserve = f
		if err := c.Validate(); err == nil {
			t.Errorf("BackgroundReserve %v accepted", f)
		}
	}
}

// TestCriticalPassesBackgroundHeldByTheReserve: a background waiter at the
// front that the reserve holds does not hold the critical waiter behind
// it, which goes as soon as the bucket holds its unit.
func TestCriticalPassesBackgroundHeldByTheReserve(t *testing.T) {
	r := newTestRate(t, func(c *RateConfig) {
		c.MinUnitsPerMinute, c.InitialUnitsPerMinute, c.MaxUnitsPerMinute = 60, 60, 60 // one a second
		c.BurstTime = headroom.Duration(time.Second)
		c.BackgroundReserve = 0.9 // background: one unit in 10 s
	})
	if ok, _ := r.TryAcquireLevel(0, 1, 2); !ok {
		t.Fatal("critical unit refused with a full bucket")
	}
	bg, _, ok := r.EnqueueLevel(0, 1, 0)
	if !ok {
		t.Fatal("background waiter refused")
	}
	if r.q[r.qHead].id != bg {
		t.Fatal("the background waiter is not at the front")
	}
	// 32 units: its turn, at critical work's share, comes after the
	// background unit's; the bucket of one unit lets it go once full.
	crit, _, ok := r.EnqueueLevel(500*time.Millisecond, 32, 2)
	if !ok {
		t.Fatal("critical waiter refused")
	}
	if r.q[r.qHead].id != bg {
		t.Fatal("the critical waiter went ahead of the background one: nothing to pass")
	}
	at, ok := r.Next(500 * time.Millisecond)
	if !ok || at > time.Second {
		t.Fatalf("Next = %v, %v; want the critical waiter's second, not background work's pace", at, ok)
	}
	w, ok := r.Dequeue(time.Second)
	if !ok || w.ID != crit || !w.Granted {
		t.Fatalf("Dequeue at 1s = %+v, %v; want the critical waiter granted", w, ok)
	}
	if _, ok := r.Dequeue(time.Second); ok {
		t.Fatal("the background waiter went at 1 s, inside the reserve")
	}
}
