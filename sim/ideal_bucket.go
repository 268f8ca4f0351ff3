package sim

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// bucketShadow is the ideal client of a token bucket or of nginx's leaky
// bucket. Both accept a run of requests by pair conditions on their
// arrivals, and the shadow checks each on the worst arrivals the latency
// bounds allow: a request it sent at t with its latest arrival hi (a leg
// after t, sooner once its response says so), and the new request with
// its earliest, t+Latency.Min.
//
//   - A token bucket of depth b and rate r accepts a run when every
//     interval [x, y] holds at most b + r·(y−x) units.
//   - nginx accepts it when, between any two requests it accepted, those
//     after the first hold at most burst + r·(the time between), the leak
//     truncated as nginx truncates it. Which of two requests whose
//     arrivals may cross came first is not known, so the shadow counts the
//     first too, less one unit: every request has one at least.
//
// The requests whose hi is before the new one's earliest arrival are
// folded, in order of hi, into the bucket's own recursion (the debt, or
// nginx's excess, at the last hi); those that may arrive with it or after
// it are counted whole, as if they came all at once. The check is then the
// kind's own, and exact when every request's arrival is known. nginx's
// clock counts whole milliseconds: the shadow reads both instants on it,
// which can only shorten the time between them.
type bucketShadow struct {
	w     idealWorld
	nginx bool // nginx's pair rule, not a token bucket's

	quantum  time.Duration // the server's clock: 1 ns, or nginx's millisecond
	unit     int64         // one unit's debt: the window in ns, or nginx's millionths
	capacity int64         // the depth, in debt
	perFold  int64         // debt nginx's truncated leak may keep at each request
	steps    []refillStep  // the refill of the whole bucket

	// chained is false until the first request is folded into nginx's
	// recursion: a fresh nginx has none.
	chained bool
	debt    int64 // at last; nginx's may fall below 0 (the leak since its last request)
	last    int64 // quanta
	recent  []*bucketItem
	// folded are the last requests folded, each with the state before it,
	// so that a response that comes after its request was folded can still
	// narrow it.
	folded []foldRecord
	// scratch marks a copy that looks ahead (fits): it keeps no records.
	scratch bool
}

type bucketItem struct {
	hi    time.Duration
	units int
}

// foldRecord is a folded request and the state before it.
type foldRecord struct {
	item       *bucketItem
	chained    bool
	debt, last int64
}

// refoldable is how many of the last folded requests a response may still
// narrow.
const refoldable = 8

// refillStep is a refill of perQuantum debt each quantum from at (quanta).
type refillStep struct {
	at, perQuantum int64
}

func newBucketShadow(w idealWorld) *bucketShadow {
	s := &bucketShadow{w: w, quantum: 1, unit: int64(w.server.Window)}
	depth := w.server.Burst
	if w.server.Kind == kindTokenBucket {
		if depth == 0 {
			depth = w.schedule[0].Units
		}
		for _, st := range w.schedule {
			s.steps = append(s.steps, refillStep{at: int64(st.At), perQuantum: int64(st.Units)})
		}
		s.chained = true // a fresh token bucket is full: no debt at 0
	} else {
		s.nginx, s.quantum, s.unit = true, time.Millisecond, 1_000_000
		for _, st := range w.schedule {
			r := nginxRate(st.Units, w.server.Window) // thousandths a second: millionths a millisecond
			s.steps = append(s.steps, refillStep{at: int64(st.At / time.Millisecond), perQuantum: r})
			if r%1000 != 0 {
				s.perFold = 999 // nginx drops the fraction of a thousandth of each leak
			}
		}
	}
	s.capacity = int64(depth) * s.unit
	return s
}

func (s *bucketShadow) quanta(t time.Duration) int64 { return int64(t / s.quantum) }

// refill is the debt the bucket sheds from quantum a to quantum b.
func (s *bucketShadow) refill(a, b int64) int64 {
	if b <= a {
		return 0
	}
	total := int64(0)
	for i, st := range s.steps {
		from, to := max(a, st.at), b
		if i+1 < len(s.steps) {
			to = min(b, s.steps[i+1].at)
		}
		if to <= from {
			continue
		}
		if st.perQuantum > 0 && to-from > math.MaxInt64/4/st.perQuantum {
			return math.MaxInt64 / 4
		}
		total += st.perQuantum * (to - from)
		if total > math.MaxInt64/4 {
			return math.MaxInt64 / 4
		}
	}
	return total
}

// refilledBy is the first quantum from a by which the bucket has shed
// amount (false: never).
func (s *bucketShadow) refilledBy(a, amount int64) (int64, bool) {
	if amount <= 0 {
		return a, true
	}
	for i, st := range s.steps {
		end := int64(math.MaxInt64)
		if i+1 < len(s.steps) {
			end = s.steps[i+1].at
		}
		if end <= a {
			continue
		}
		from := max(a, st.at)
		if st.perQuantum > 0 {
			need := (amount + st.perQuantum - 1) / st.perQuantum
			if from+need <= end {
				return from + need, true
			}
		}
		amount -= s.refill(from, end)
	}
	return 0, false
}

func (s *bucketShadow) cost(units int) int64 { return int64(units) * s.unit }

// fold moves into the recursion the recent requests sure to have arrived
// before quantum lo, in order of their latest arrival.
func (s *bucketShadow) fold(lo int64) {
	slices.SortStableFunc(s.recent, func(a, b *bucketItem) int { return cmp.Compare(a.hi, b.hi) })
	n := 0
	for _, it := range s.recent {
		if s.quanta(it.hi) >= lo {
			break
		}
		s.foldOne(it)
		n++
	}
	s.recent = slices.Delete(s.recent, 0, n)
}

func (s *bucketShadow) foldOne(it *bucketItem) {
	if !s.scratch {
		if len(s.folded) == refoldable {
			s.folded = slices.Delete(s.folded, 0, 1)
		}
		s.folded = append(s.folded, foldRecord{item: it, chained: s.chained, debt: s.debt, last: s.last})
	}
	h := max(s.quanta(it.hi), s.last)
	c := s.cost(it.units)
	switch {
	case !s.nginx:
		s.debt = s.debtAt(h) + c
	case !s.chained:
		s.debt = c - s.unit
	default:
		s.debt = max(s.debtAt(h)+c, c-s.unit)
	}
	s.debt += s.perFold
	s.chained, s.last = true, h
}

// refold folds again the last folded requests, one of them narrowed, from
// the state before the first.
func (s *bucketShadow) refold() {
	rec := s.folded
	s.chained, s.debt, s.last = rec[0].chained, rec[0].debt, rec[0].last
	items := make([]*bucketItem, len(rec))
	for i, r := range rec {
		items[i] = r.item
	}
	slices.SortStableFunc(items, func(a, b *bucketItem) int { return cmp.Compare(a.hi, b.hi) })
	s.folded = s.folded[:0]
	for _, it := range items {
		s.foldOne(it)
	}
}

// room is how much debt the bucket may hold, at the new request's
// arrival, for units more; bunched says none is enough while the recent
// requests may arrive together with them, and free that nothing holds it
// back (a fresh nginx).
func (s *bucketShadow) room(units int) (room int64, bunched, free bool) {
	held, least := s.cost(units), s.cost(units)
	for _, it := range s.recent {
		held += s.cost(it.units)
		least = min(least, s.cost(it.units))
	}
	if s.nginx {
		// Among requests that may arrive together, nginx counts those
		// after the first.
		if held-least > s.capacity {
			return 0, true, false
		}
		if !s.chained {
			return 0, false, true
		}
	} else if held > s.capacity {
		return 0, true, false
	}
	return s.capacity - held, false, false
}

// debtAt is the debt at quantum to, from the last folded request's. A
// token bucket's never falls below 0. nginx's may, the leak since its last
// request counting towards the next; but at a step of the quota nginx
// starts again from the step, its excess no lower than 0 (leakyBucket's
// setQuota). Each of nginx's leaks may keep perFold more.
func (s *bucketShadow) debtAt(to int64) int64 {
	d, t := s.debt, s.last
	for _, st := range s.steps {
		if st.at > t && st.at <= to {
			d, t = max(d-s.refill(t, st.at), 0)+s.perFold, st.at
		}
	}
	d -= s.refill(t, to) - s.perFold
	if !s.nginx {
		d = max(d, 0)
	}
	return d
}

// until is the first quantum from lo at which the debt is at most room
// (false: never). The debt falls between the steps of the quota and may
// jump at one (nginx's restart).
func (s *bucketShadow) until(lo, room int64) (int64, bool) {
	a := max(lo, s.last)
	for {
		d := s.debtAt(a)
		if d <= room {
			return a, true
		}
		b, more := s.stepAfter(a)
		if at, ok := s.refilledBy(a, d-room); ok && (!more || at < b) {
			return at, true
		}
		if !more {
			return 0, false
		}
		a = b
	}
}

// stepAfter is the first step of the quota after quantum a.
func (s *bucketShadow) stepAfter(a int64) (int64, bool) {
	for _, st := range s.steps {
		if st.at > a {
			return st.at, true
		}
	}
	return 0, false
}

// holds reports whether the debt is at most room at every arrival in
// [lo, hi]: at lo, and just after each step within, where nginx's may jump.
func (s *bucketShadow) holds(lo, hi, room int64) bool {
	if s.debtAt(lo) > room {
		return false
	}
	for _, st := range s.steps {
		if st.at > lo && st.at <= hi && s.debtAt(st.at) > room {
			return false
		}
	}
	return true
}

func (s *bucketShadow) try(now time.Duration, units int) (handle, bool, time.Duration) {
	lo, hi := s.quanta(now+s.w.lat.Min), s.quanta(now+s.w.lat.Max)
	s.fold(lo)
	if room, bunched, free := s.room(units); free || !bunched && s.holds(lo, hi, room) {
		it := &bucketItem{hi: now + s.w.lat.Max, units: units}
		s.recent = append(s.recent, it)
		return it, true, 0
	}
	return nil, false, max(s.fits(lo, units)-s.w.lat.Min, now+1)
}

// fits is the first arrival, from quantum lo on, at which the check
// would pass, counting only what the shadow holds now.
func (s *bucketShadow) fits(lo int64, units int) time.Duration {
	c := *s
	c.recent = slices.Clone(s.recent)
	c.folded, c.scratch = nil, true
	span := c.quanta(s.w.jitter()) + 1
	for {
		nextFold := int64(math.MaxInt64)
		if len(c.recent) > 0 {
			nextFold = c.quanta(c.recent[0].hi) + 1 // fold keeps recent in order
		}
		room, bunched, free := c.room(units)
		if free {
			return time.Duration(lo) * c.quantum
		}
		at, ok := c.until(lo, room)
		if !bunched && ok && at < nextFold {
			if c.holds(at, at+span, room) {
				return time.Duration(at) * c.quantum
			}
			next, _ := c.stepAfter(at) // the step within the span where the debt jumps
			lo = next
			continue
		}
		if nextFold == math.MaxInt64 {
			return time.Duration(lo)*c.quantum + s.w.server.Window // nothing to wait for: try again later
		}
		lo = nextFold
		c.fold(lo)
	}
}

func (s *bucketShadow) settle(h handle, hi time.Duration) {
	it := h.(*bucketItem)
	if hi >= it.hi {
		return
	}
	it.hi = hi
	if slices.ContainsFunc(s.folded, func(r foldRecord) bool { return r.item == it }) {
		s.refold()
	}
}

func (s *bucketShadow) largest() int {
	if s.nginx {
		return math.MaxInt32 // the leak makes room for any request, in time
	}
	return int(s.capacity / s.unit)
}
