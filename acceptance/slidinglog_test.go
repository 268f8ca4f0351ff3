package acceptance

import (
	"math/rand/v2"
	"testing"
	"time"
)

var epoch = time.Unix(1_700_000_000, 0)

// TestSlidingLogNeverExceeds offers random requests and checks, at every
// admission, that the units admitted in (t − window, t] are at most the
// capacity — the only instants the sum can grow — and that each refusal was
// needed: the request would have broken the bound.
func TestSlidingLogNeverExceeds(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 1))
		capacity := 1 + rng.IntN(50)
		window := time.Duration(1+rng.IntN(2000)) * time.Millisecond
		s := newSlidingLog(capacity, window)
		type admitted struct {
			at    time.Time
			units int
		}
		var all []admitted
		inWindow := func(now time.Time) int {
			sum := 0
			for _, a := range all {
				if a.at.After(now.Add(-window)) && !a.at.After(now) {
					sum += a.units
				}
			}
			return sum
		}
		now := epoch
		for range 3000 {
			now = now.Add(time.Duration(rng.IntN(int(window/time.Microsecond)/10+1)) * time.Microsecond)
			cost := 1 + rng.IntN(5)
			before := inWindow(now)
			if s.admit(now, cost) {
				all = append(all, admitted{now, cost})
				if got := inWindow(now); got > capacity {
					t.Fatalf("seed %d: %d units in the window ending %s, capacity %d", seed, got, now.Sub(epoch), capacity)
				}
			} else if before+cost <= capacity {
				t.Fatalf("seed %d: refused %d units at %s with %d of %d in the window", seed, cost, now.Sub(epoch), before, capacity)
			}
			if got, want := s.remaining(now), max(0, capacity-inWindow(now)); got != want {
				t.Fatalf("seed %d: remaining %d at %s, want %d", seed, got, now.Sub(epoch), want)
			}
		}
	}
}

// TestSlidingLogWaitIsExact checks that the wait a refusal reports is the
// first instant the units fit: not a nanosecond sooner.
func TestSlidingLogWaitIsExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	s := newSlidingLog(10, time.Second)
	now := epoch
	checked := 0
	for range 2000 {
		now = now.Add(time.Duration(rng.IntN(200)) * time.Millisecond)
		cost := 1 + rng.IntN(5)
		if s.admit(now, cost) {
			continue
		}
		d, ok := s.wait(now, cost)
		if !ok || d <= 0 {
			t.Fatalf("refused %d units at %s but wait is %s, %v", cost, now.Sub(epoch), d, ok)
		}
		probe := *s
		probe.entries = append([]logEntry(nil), s.entries...)
		if probe.admit(now.Add(d-time.Nanosecond), cost) {
			t.Fatalf("%d units fit at %s, before the wait of %s", cost, (now.Add(d - time.Nanosecond)).Sub(epoch), d)
		}
		probe = *s
		probe.entries = append([]logEntry(nil), s.entries...)
		if !probe.admit(now.Add(d), cost) {
			t.Fatalf("%d units do not fit after the wait of %s from %s", cost, d, now.Sub(epoch))
		}
		checked++
	}
	if checked == 0 {
		t.Fatal("no refusal to check")
	}
}

func TestSlidingLogBoundaries(t *testing.T) {
	s := newSlidingLog(3, time.Second)
	if !s.admit(epoch, 3) {
		t.Fatal("a fresh log refused its capacity")
	}
	if s.admit(epoch.Add(time.Second-1), 1) {
		t.Fatal("admitted a unit a nanosecond before the first ones left")
	}
	if got := s.untilOldestLeaves(epoch.Add(time.Second - 1)); got != 1 {
		t.Fatalf("oldest leaves in %s, want 1ns", got)
	}
	if !s.admit(epoch.Add(time.Second), 3) {
		t.Fatal("refused the capacity when the first units had left")
	}
	if _, ok := s.wait(epoch.Add(time.Second), 4); ok {
		t.Fatal("a cost above the capacity should never fit")
	}
	s.setCapacity(1)
	if s.admit(epoch.Add(1500*time.Millisecond), 1) {
		t.Fatal("admitted after halving with the window still over the new capacity")
	}
	if d, _ := s.wait(epoch.Add(1500*time.Millisecond), 1); d != 500*time.Millisecond {
		t.Fatalf("wait after halving %s, want 500ms", d)
	}
	if got := newSlidingLog(5, time.Minute).untilOldestLeaves(epoch); got != time.Minute {
		t.Fatalf("an empty log's reset is %s, want the window", got)
	}
}

func TestGreedyUnits(t *testing.T) {
	tests := []struct {
		name  string
		sched logSchedule
		d     time.Duration
		want  float64
	}{
		{"whole windows", logSchedule{units: 100, window: time.Second}, 20 * time.Second, 2000},
		{"partial window counts its burst", logSchedule{units: 100, window: time.Second}, 2500 * time.Millisecond, 300},
		{"long window", logSchedule{units: 300, window: time.Minute}, 3 * time.Minute, 900},
		{"halves on a window edge", logSchedule{units: 100, window: time.Second, halveAt: 10 * time.Second}, 20 * time.Second, 1000 + 500},
		// The burst at 9 s holds 100 until 10 s, past the halving at 9.5 s.
		{"halves mid-window", logSchedule{units: 100, window: time.Second, halveAt: 9500 * time.Millisecond}, 20 * time.Second, 1000 + 500},
		{"outage of two windows", logSchedule{units: 100, window: time.Second, downFrom: 10 * time.Second, downTo: 12 * time.Second}, 20 * time.Second, 1800},
		// Down from 10.5 s to 12.5 s: bursts at 0…10, then 12.5 … 19.5.
		{"outage off the edge", logSchedule{units: 100, window: time.Second, downFrom: 10500 * time.Millisecond, downTo: 12500 * time.Millisecond}, 20 * time.Second, 1100 + 800},
		{"no capacity", logSchedule{units: 0, window: time.Second}, 20 * time.Second, 0},
	}
	for _, tt := range tests {
		if got := tt.sched.greedyUnits(tt.d); got != tt.want {
			t.Errorf("%s: %v units, want %v", tt.name, got, tt.want)
		}
	}
}
