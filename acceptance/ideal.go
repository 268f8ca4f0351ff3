package acceptance

import "time"

// logSchedule is how a sliding-log server of ours changes over a run, in
// time since its first request: its capacity halves at halveAt (0: never),
// and it accepts nothing in [downFrom, downTo).
type logSchedule struct {
	units    int
	window   time.Duration
	halveAt  time.Duration
	downFrom time.Duration
	downTo   time.Duration
}

func (s logSchedule) capacityAt(t time.Duration) int {
	if s.halveAt > 0 && t >= s.halveAt {
		return s.units / 2
	}
	return s.units
}

func (s logSchedule) downAt(t time.Duration) bool {
	return s.downTo > s.downFrom && t >= s.downFrom && t < s.downTo
}

// greedyUnits is the units the greedy client has accepted in [0, d): the
// client that, from time 0, sends every unit the server would accept the
// instant it would accept it. Against a sliding log that is the most any
// client can have by d: a unit taken at t is never worth keeping for later,
// since it leaves the window no later than one taken after t.
//
// The client's units come in bursts: all the room there is at 0, then at
// each instant some leave the window, the capacity changes or an outage
// ends. The bursts are simulated exactly, in the durations' nanoseconds.
func (s logSchedule) greedyUnits(d time.Duration) float64 {
	if s.units < 1 || s.window <= 0 {
		return 0
	}
	type burst struct {
		at    time.Duration
		units int
	}
	var live []burst
	total := 0
	for t := time.Duration(0); t < d; {
		if s.downAt(t) {
			t = s.downTo
			continue
		}
		// Forget what left the window; count what is in it.
		kept, used := live[:0], 0
		for _, b := range live {
			if b.at+s.window > t {
				kept = append(kept, b)
				used += b.units
			}
		}
		live = kept
		if free := s.capacityAt(t) - used; free > 0 {
			live = append(live, burst{at: t, units: free})
			total += free
		}
		// The next instant anything can change.
		next := time.Duration(-1)
		soonest := func(c time.Duration) {
			if c > t && (next < 0 || c < next) {
				next = c
			}
		}
		for _, b := range live {
			soonest(b.at + s.window)
		}
		soonest(s.halveAt)
		soonest(s.downFrom)
		if next < 0 {
			break
		}
		t = next
	}
	return float64(total)
}
