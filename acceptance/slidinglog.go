package acceptance

import "time"

// slidingLog is a sliding-window log that counts units: it admits a request
// of cost units at time t if, and only if, the units it admitted in
// (t − window, t] plus cost are at most its capacity. A request admitted at
// a counts until a + window and no longer. Refused requests leave no trace.
//
// It is a time-explicit core: every method takes the time, none reads the
// clock, and it is not safe for concurrent use (the server holds a mutex).
type slidingLog struct {
	capacity int
	window   time.Duration
	entries  []logEntry // admitted, oldest first; entries[:head] have left
	head     int
	used     int // the units of entries[head:]
}

type logEntry struct {
	at    time.Time
	units int
}

func newSlidingLog(capacity int, window time.Duration) *slidingLog {
	return &slidingLog{capacity: capacity, window: window}
}

// expire forgets the entries that have left the window at now.
func (s *slidingLog) expire(now time.Time) {
	for s.head < len(s.entries) && !s.entries[s.head].at.Add(s.window).After(now) {
		s.used -= s.entries[s.head].units
		s.head++
	}
	// Reclaim the space of the entries that left once they are most of
	// the slice, so the log's memory follows what the window holds.
	if s.head > 64 && s.head > len(s.entries)/2 {
		s.entries = append(s.entries[:0], s.entries[s.head:]...)
		s.head = 0
	}
}

// admit admits cost units at now if they fit, and reports whether they did.
func (s *slidingLog) admit(now time.Time, cost int) bool {
	s.expire(now)
	if s.used+cost > s.capacity {
		return false
	}
	s.entries = append(s.entries, logEntry{at: now, units: cost})
	s.used += cost
	return true
}

// remaining is how many units would fit at now: capacity less the units in
// the window, never below 0.
func (s *slidingLog) remaining(now time.Time) int {
	s.expire(now)
	return max(0, s.capacity-s.used)
}

// wait is how long from now until cost units fit, 0 if they fit now; ok is
// false when they never can (cost above the capacity).
func (s *slidingLog) wait(now time.Time, cost int) (d time.Duration, ok bool) {
	s.expire(now)
	if cost > s.capacity {
		return 0, false
	}
	excess := s.used + cost - s.capacity
	for i := s.head; excess > 0 && i < len(s.entries); i++ {
		excess -= s.entries[i].units
		if excess <= 0 {
			return s.entries[i].at.Add(s.window).Sub(now), true
		}
	}
	return 0, true
}

// untilOldestLeaves is how long from now until the oldest units in the
// window leave it — the soonest any come back — or the whole window when it
// holds none.
func (s *slidingLog) untilOldestLeaves(now time.Time) time.Duration {
	s.expire(now)
	if s.head == len(s.entries) {
		return s.window
	}
	return s.entries[s.head].at.Add(s.window).Sub(now)
}

// setCapacity changes the capacity from now on; units already in the
// window stay, so a smaller capacity may refuse everything until enough of
// them leave.
func (s *slidingLog) setCapacity(n int) { s.capacity = n }
