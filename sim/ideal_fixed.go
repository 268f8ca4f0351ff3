package sim

import "time"

// The ideal client against a fixed window. A request sent at t arrives in
// [t+Latency.Min, t+Latency.Max]; it is counted in the window it arrives in.

// alignedShadow is the ideal client of an aligned fixed window (windows are
// multiples of Window from the start of the run). It counts, for each
// window, every unit that may arrive in it, and admits a request when each
// window its arrival may fall in has room for it within the quota in force.
// A backlogged client sends a window's quota a leg before the window
// starts, and gets every unit of it.
type alignedShadow struct {
	w      idealWorld
	counts map[int64]int // units that may arrive in window k
}

type alignedItem struct {
	hi    time.Duration
	units int
}

func newAlignedShadow(w idealWorld) *alignedShadow {
	return &alignedShadow{w: w, counts: map[int64]int{}}
}

func (s *alignedShadow) index(t time.Duration) int64 { return int64(t / s.w.server.Window) }

func (s *alignedShadow) try(now time.Duration, units int) (handle, bool, time.Duration) {
	win := s.w.server.Window
	lo, hi := now+s.w.lat.Min, now+s.w.lat.Max
	k0, k1 := s.index(lo), s.index(hi)
	failed := int64(-1)
	for k := k0; k <= k1; k++ {
		from, to := max(lo, time.Duration(k)*win), min(hi, time.Duration(k+1)*win-1)
		if s.counts[k]+units > minQuota(s.w.schedule, from, to) {
			failed = k
		}
	}
	if failed >= 0 {
		// Until its arrival is past the last full window; sooner where the
		// quota rises within it.
		next := time.Duration(failed+1)*win - s.w.lat.Min
		if at, ok := nextStep(s.w.schedule, lo); ok && at-s.w.lat.Min > now {
			next = min(next, at-s.w.lat.Min)
		}
		return nil, false, next
	}
	for k := k0; k <= k1; k++ {
		s.counts[k] += units
	}
	if len(s.counts) > 64 {
		for k := range s.counts {
			if k < k0 {
				delete(s.counts, k)
			}
		}
	}
	return &alignedItem{hi: hi, units: units}, true, 0
}

func (s *alignedShadow) settle(h handle, hi time.Duration) {
	it := h.(*alignedItem)
	if hi >= it.hi {
		return
	}
	for k := s.index(hi) + 1; k <= s.index(it.hi); k++ {
		s.counts[k] -= it.units
	}
	it.hi = hi
}

func (s *alignedShadow) largest() int { return maxQuota(s.w.schedule) }

// cycleShadow is the ideal client of a fixed window that starts with the
// first request after the last window ended. It sends in cycles: a cycle
// starts with a request, whose arrival opens the window at some instant
// in [lo, hi]; the cycle's later requests go while their arrival is sure
// to fall before lo + Window; the next cycle starts once a request sent
// then is sure to arrive after hi + Window. Each response of the cycle
// narrows hi: the window opened no later than any of its requests arrived.
// Without responses a cycle lasts Window + the jitter; with a window's
// worth of requests, the fastest of their round trips bounds it closely.
type cycleShadow struct {
	w      idealWorld
	open   bool
	lo, hi time.Duration
	count  int
	cycle  int
}

type cycleItem struct{ cycle int }

func newCycleShadow(w idealWorld) *cycleShadow { return &cycleShadow{w: w} }

func (s *cycleShadow) try(now time.Duration, units int) (handle, bool, time.Duration) {
	m, mx, win := s.w.lat.Min, s.w.lat.Max, s.w.server.Window
	q := minQuota(s.w.schedule, now+m, now+mx)
	switch {
	case s.open && now+mx < s.lo+win && s.count+units <= q:
		s.count += units
		return &cycleItem{s.cycle}, true, 0
	case !s.open || now >= s.hi+win-m:
		if units > q {
			if at, ok := nextStep(s.w.schedule, now+m); ok {
				return nil, false, at - m
			}
			return nil, false, now + win
		}
		s.open, s.lo, s.hi, s.count = true, now+m, now+mx, units
		s.cycle++
		return &cycleItem{s.cycle}, true, 0
	}
	return nil, false, s.hi + win - m
}

func (s *cycleShadow) settle(h handle, hi time.Duration) {
	if h.(*cycleItem).cycle == s.cycle {
		s.hi = min(s.hi, hi)
	}
}

func (s *cycleShadow) largest() int { return maxQuota(s.w.schedule) }
