package sim

import (
	"math"
	"time"
)

// counterShadow is the ideal client of a sliding counter. A unit that
// arrived at a counts, at T, 1 while T is in a's window and
// 1 − (T − the next window's start)/Window in the next: more the later it
// arrived. The shadow counts each unit it sent at its latest possible
// arrival (hi), and a unit that may not have arrived yet at 1; the sum,
// U(T), falls as T passes and rises only when a request it sends may
// arrive. A request sent at t is admitted when U(t+Latency.Min), its own
// units included, fits the quota: then it fits at any arrival, and so does
// every request sent before it. The server rounds its estimate to the
// nearest unit before it adds the request, which gives almost half a unit
// more (roundingMargin of it).
type counterShadow struct {
	w    idealWorld
	sums map[int64]int // units by the window of their hi
}

type counterItem struct {
	hi    time.Duration
	units int
}

// roundingMargin is the part of the server's rounding margin, below half a
// unit, the shadow takes: the rest covers float64's rounding.
const roundingMargin = 0.49

func newCounterShadow(w idealWorld) *counterShadow {
	return &counterShadow{w: w, sums: map[int64]int{}}
}

func (s *counterShadow) index(t time.Duration) int64 { return int64(t / s.w.server.Window) }

// load is U(T) as the window of T, its start, the units counted whole and
// those of the previous window.
func (s *counterShadow) load(k int64) (whole, previous int) {
	for j, u := range s.sums {
		switch {
		case j >= k:
			whole += u
		case j == k-1:
			previous = u
		}
	}
	return whole, previous
}

func (s *counterShadow) room(q int, units int) float64 {
	return float64(q) + roundingMargin - float64(units)
}

func (s *counterShadow) try(now time.Duration, units int) (handle, bool, time.Duration) {
	win := s.w.server.Window
	lo, hi := now+s.w.lat.Min, now+s.w.lat.Max
	k := s.index(lo)
	whole, prev := s.load(k)
	room := s.room(minQuota(s.w.schedule, lo, hi), units)
	elapsed := lo - time.Duration(k)*win
	if float64(whole)+float64(prev)*float64(win-elapsed)/float64(win) <= room {
		s.sums[s.index(hi)] += units
		if len(s.sums) > 8 {
			for j := range s.sums {
				if j < k-1 {
					delete(s.sums, j)
				}
			}
		}
		return &counterItem{hi: hi, units: units}, true, 0
	}
	next := s.fits(k, room) - s.w.lat.Min
	if at, ok := nextStep(s.w.schedule, lo); ok {
		next = min(next, max(at-s.w.lat.Min, now+1))
	}
	return nil, false, max(next, now+1)
}

// fits is the first arrival, from window k on, at which U fits room,
// counting only what the shadow holds now.
func (s *counterShadow) fits(k int64, room float64) time.Duration {
	win := float64(s.w.server.Window)
	if room < 0 {
		return time.Duration(k+2) * s.w.server.Window // larger than the quota in force: try again later
	}
	for j := k; ; j++ {
		whole, prev := s.load(j)
		if float64(whole) > room {
			continue // all of it is still counted whole in window j
		}
		if prev == 0 {
			return time.Duration(j) * s.w.server.Window
		}
		// prev × (W − x)/W ≤ room − whole
		x := win * (1 - (room-float64(whole))/float64(prev))
		return time.Duration(j)*s.w.server.Window + time.Duration(math.Ceil(max(x, 0))) + 1
	}
}

func (s *counterShadow) settle(h handle, hi time.Duration) {
	it := h.(*counterItem)
	if hi >= it.hi {
		return
	}
	if from, to := s.index(it.hi), s.index(hi); from != to {
		s.sums[from] -= it.units
		s.sums[to] += it.units
	}
	it.hi = hi
}

func (s *counterShadow) largest() int { return maxQuota(s.w.schedule) }
