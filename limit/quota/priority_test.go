package quota

import (
	"errors"
	"math/rand/v2"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
)

// admitted counts the one-unit attempts of priority p that key admits at
// now, up to most.
func admitted(g *Guard, key string, now time.Time, p limit.Priority, most int) int {
	n := 0
	for n < most {
		if ok, _ := g.TryAcquirePriorityAt(key, now, 1, p); !ok {
			break
		}
		n++
	}
	return n
}

// TestLevelReserveHeldWhileAHigherLevelAsks: with 30 of 100 left for an
// hour, a reserve
// of 2 and 20 more kept back from background work, background takes 8 once
// critical work has asked and then waits for the reset; critical work goes
// on down to the guard's reserve.
func TestLevelReserveHeldWhileAHigherLevelAsks(t *testing.T) {
	g := newGuard(t, Options{Reserves: Reserves{Background: 0.2}})
	g.Observe("h", Response{Status: 200, Header: xh(30, 100, time.Hour)}, t0)
	if n := admitted(g, "h", t0, limit.Critical, 1); n != 1 {
		t.Fatalf("critical attempt refused with 30 of 100 left")
	}
	if n := admitted(g, "h", t0, limit.Background, 100); n != 7 {
		t.Fatalf("background took %d with 29 left; want 7, down to 22 (reserve 2 + 20 held)", n)
	}
	if ok, d := g.TryAcquirePriorityAt("h", t0.Add(10*time.Second), 1, limit.Background); ok || d != 5*time.Minute {
		t.Fatalf("background inside its reserve: %v, %v; want a wait for the reset, capped at MaxRetryAfter (5m)", ok, d)
	}
	if n := admitted(g, "h", t0, limit.Critical, 100); n != 20 {
		t.Fatalf("critical took %d with 22 left; want 20, down to the guard's reserve", n)
	}
}

// TestLevelReserveLentAndTakenBack: with nobody above asking, background
// spends down to the guard's reserve; once critical work asks, what is
// left inside the background reserve is its.
func TestLevelReserveLentAndTakenBack(t *testing.T) {
	g := newGuard(t, Options{Reserves: Reserves{Default: 0.1, Background: 0.2}})
	g.Observe("h", Response{Status: 200, Header: xh(40, 100, time.Hour)}, t0)
	if n := admitted(g, "h", t0, limit.Background, 10); n != 10 {
		t.Fatalf("background alone took %d of 10; want all (the reserve is lent)", n)
	}
	// 30 left; critical asks: the background reserve (20) is taken back.
	admitted(g, "h", t0, limit.Critical, 1)
	if n := admitted(g, "h", t0, limit.Background, 100); n != 7 {
		t.Fatalf("background took %d with 29 left after critical asked; want 7", n)
	}
	if n := admitted(g, "h", t0, limit.Default, 100); n != 10 {
		t.Fatalf("default took %d with 22 left; want 10, down to 12 (reserve 2 + 10 held)", n)
	}
	// A minute later (the lending window: the key's window is unknown)
	// critical has not asked again, and its reserve is lent once more.
	g.Observe("h", Response{Status: 200, Header: xh(12, 100, time.Hour)}, t0.Add(time.Minute))
	if n := admitted(g, "h", t0.Add(time.Minute), limit.Background, 100); n != 10 {
		t.Fatalf("background took %d of 12 a minute after critical asked; want 10, down to the guard's reserve", n)
	}
}

// TestPropertyNoLevelTakesAReserveHeldAbove drives random attempts of the
// three levels with random figures and checks that no attempt is admitted
// that leaves less than its level's reserve while a level above asked
// within the window.
func TestPropertyNoLevelTakesAReserveHeldAbove(t *testing.T) {
	r := Reserves{Default: 0.1, Background: 0.3}
	levels := [...]limit.Priority{limit.Background, limit.Default, limit.Critical}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 3))
		g := newGuard(t, Options{Reserves: r})
		const limitUnits = 200
		now := t0
		var asked [3]time.Time
		g.Observe("h", Response{Status: 200, Header: xh(limitUnits, limitUnits, time.Hour)}, now)
		for step := range 400 {
			now = now.Add(time.Duration(rng.IntN(4000)) * time.Millisecond)
			if rng.IntN(40) == 0 {
				g.Observe("h", Response{Status: 200, Header: xh(rng.IntN(limitUnits+1), limitUnits, time.Hour)}, now)
			}
			level := rng.IntN(3)
			cost := 1 + rng.IntN(3)
			before, _ := g.State("h", now)
			asked[level] = now
			ok, _ := g.TryAcquirePriorityAt("h", now, cost, levels[level])
			if !ok {
				continue
			}
			held := int64(0)
			for above := level + 1; above < 3; above++ {
				if now.Sub(asked[above]) < time.Minute && !asked[above].IsZero() {
					held = int64(r.levels()[level] * limitUnits)
				}
			}
			if left := before.Remaining - int64(cost); held > 0 && left < held+int64(0.02*limitUnits) {
				t.Fatalf("seed %d step %d: a %s attempt of %d took %d remaining to %d, inside the %d its level keeps back while a level above asks",
					seed, step, levels[level], cost, before.Remaining, left, held)
			}
		}
	}
}

func TestReservesValidate(t *testing.T) {
	o := Options{Reserves: Reserves{Default: 0.5, Background: 0.3}, ReserveFraction: new(0.6)}
	err := o.Validate()
	var ce *headroom.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("Validate: %v; want *headroom.ConfigError", err)
	}
	want := "quota: Reserves.Default = 0.5: want a fraction in [0, 1) that leaves room above ReserveFraction, such as 0.2\n" +
		"quota: Reserves.Background = 0.3: want at least Reserves.Default: a lower level keeps back all that a higher one does"
	if err.Error() != want {
		t.Fatalf("Validate:\n%v\nwant:\n%s", err, want)
	}
}

// TestAcquireReadsThePriorityOfTheContext: Acquire keeps the background
// reserve from a request whose context says background, and not from one
// whose context says nothing (the default level, which keeps nothing back
// here).
func TestAcquireReadsThePriorityOfTheContext(t *testing.T) {
	g := newGuard(t, Options{Reserves: Reserves{Background: 0.5}, QueueLimit: new(0)})
	now := time.Now()
	g.Observe("h", Response{Status: 200, Header: xh(40, 100, time.Hour)}, now)
	s, err := g.Acquire(t.Context(), "h", 1)
	if err != nil {
		t.Fatalf("a default request with 40 of 100 left: %v", err)
	}
	s.Release()
	_, err = g.Acquire(limit.WithPriority(t.Context(), limit.Background), "h", 1)
	if !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("a background request inside its reserve while default work asks: %v; want a refusal", err)
	}
}

// TestLevelReserveSizedByWhatIsAskedBeforeTheReset: critical work asking 2
// units a second for a minute, with the reset 30 s away, will want about 62
// of the 200 its reserve could keep (its demand, averaged over 10 s, is
// 0.1·(1−e^−6)/(1−e^−0.05) ≈ 2.045 a second just after an ask); background
// work spends the rest down to the guard's reserve of 20.
func TestLevelReserveSizedByWhatIsAskedBeforeTheReset(t *testing.T) {
	g := newGuard(t, Options{Reserves: Reserves{Background: 0.2}})
	now := t0
	g.Observe("h", Response{Status: 200, Header: xh(1000, 1000, 90*time.Second)}, now)
	for range 120 {
		now = now.Add(500 * time.Millisecond)
		admitted(g, "h", now, limit.Critical, 1)
	}
	if n := admitted(g, "h", now, limit.Background, 1000); n != 880-20-62 {
		t.Fatalf("background took %d of 880 with the reset 30 s away; want %d (62 held for critical work, 20 reserved)", n, 880-20-62)
	}
}

// TestHoldServesHigherLevelsFirst: a background caller held first and a
// critical caller held after it; when one unit comes back the critical
// caller takes it, and the background one goes when more comes.
func TestHoldServesHigherLevelsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := newGuard(t, Options{})
		g.Observe("h", Response{Status: 200, Header: xh(2, 100, time.Minute)}, time.Now())
		done := make(chan limit.Priority, 2)
		for _, p := range []limit.Priority{limit.Background, limit.Critical} {
			go func() {
				s, err := g.Acquire(limit.WithPriority(t.Context(), p), "h", 1)
				if err != nil {
					t.Errorf("%s: %v", p, err)
				}
				s.Release()
				done <- p
			}()
			synctest.Wait() // held, in this order
		}
		// A new window with one unit above the reserve of 2.
		g.Observe("h", Response{Status: 200, Header: xh(3, 100, 2*time.Minute)}, time.Now())
		if p := <-done; p != limit.Critical {
			t.Fatalf("%s went first; want the critical caller", p)
		}
		synctest.Wait()
		select {
		case p := <-done:
			t.Fatalf("%s went with no unit left above the reserve", p)
		default:
		}
		g.Observe("h", Response{Status: 200, Header: xh(10, 100, 3*time.Minute)}, time.Now())
		if p := <-done; p != limit.Background {
			t.Fatalf("%s went; want the background caller", p)
		}
	})
}
