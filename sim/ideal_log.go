package sim

import (
	"container/heap"
	"time"
)

// logShadow is the ideal client of a sliding log. A request arriving at a
// is accepted when the units that arrived in (a−Window, a] and its own fit
// the quota. The shadow keeps each unit it sent with the latest instant it
// may have arrived (hi: a leg after its send, sooner once its response
// says so), and admits a request sent at t when the units whose hi is
// after t+Latency.Min−Window — those that may still be in the window when
// it arrives at the earliest — and its own fit the quota. Each
// unit is then reused Window + (hi − the earliest arrival of the next) after
// it was sent: Window + the jitter without responses, less with them.
type logShadow struct {
	w     idealWorld
	items logHeap
	total int
}

type logItem struct {
	hi    time.Duration
	units int
	index int // in the heap; -1 once it has left
}

func newLogShadow(w idealWorld) *logShadow { return &logShadow{w: w} }

func (s *logShadow) try(now time.Duration, units int) (handle, bool, time.Duration) {
	lo := now + s.w.lat.Min
	for len(s.items) > 0 && s.items[0].hi <= lo-s.w.server.Window {
		s.total -= heap.Pop(&s.items).(*logItem).units
	}
	if s.total+units <= minQuota(s.w.schedule, lo, now+s.w.lat.Max) {
		it := &logItem{hi: now + s.w.lat.Max, units: units}
		heap.Push(&s.items, it)
		s.total += units
		return it, true, 0
	}
	next := now + s.w.server.Window
	if len(s.items) > 0 {
		next = s.items[0].hi + s.w.server.Window - s.w.lat.Min
	}
	if at, ok := nextStep(s.w.schedule, lo); ok {
		next = min(next, max(at-s.w.lat.Min, now+1))
	}
	return nil, false, next
}

func (s *logShadow) settle(h handle, hi time.Duration) {
	it := h.(*logItem)
	if it.index >= 0 && hi < it.hi {
		it.hi = hi
		heap.Fix(&s.items, it.index)
	}
}

func (s *logShadow) largest() int { return maxQuota(s.w.schedule) }

// logHeap orders units by the latest instant they may have arrived.
type logHeap []*logItem

func (h logHeap) Len() int           { return len(h) }
func (h logHeap) Less(i, j int) bool { return h[i].hi < h[j].hi }
func (h logHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *logHeap) Push(x any) {
	it := x.(*logItem)
	it.index = len(*h)
	*h = append(*h, it)
}
func (h *logHeap) Pop() any {
	old := *h
	it := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	it.index = -1
	return it
}
