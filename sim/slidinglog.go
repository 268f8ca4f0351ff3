package sim

import "time"

// slidingLog is an exact sliding window: it keeps every accepted request
// with its time, and accepts a request when the units of the window
// (now−window, now] and the request's stay within the quota. It never
// accepts more than the quota in any window. Its reset is when the oldest
// accepted unit leaves the window (the remaining allowance next grows); a
// refused request fits when enough of the oldest units have left.
type slidingLog struct {
	window  time.Duration
	quota   int
	entries []entry // accepted, oldest first, from head on
	head    int
	total   int // the units of entries[head:]
}

type entry struct {
	at    time.Duration
	units int
}

func newSlidingLog(s Server, q int) *slidingLog { return &slidingLog{window: s.Window, quota: q} }

func (l *slidingLog) setQuota(_ time.Duration, units int) { l.quota = units }

// expire drops the entries that left the window by now: an entry accepted at
// t counts in the window (now-window, now], so it leaves at t+window.
func (l *slidingLog) expire(now time.Duration) {
	for l.head < len(l.entries) && l.entries[l.head].at+l.window <= now {
		l.total -= l.entries[l.head].units
		l.head++
	}
	if l.head > 4096 && l.head*2 > len(l.entries) {
		n := copy(l.entries, l.entries[l.head:])
		l.entries = l.entries[:n]
		l.head = 0
	}
}

func (l *slidingLog) used(now time.Duration) int {
	l.expire(now)
	return l.total
}

// roomAt is the instant after now from which the window has room for units
// more, counting only the expiry of what it holds. ok is false when it
// never has room (units > quota).
func (l *slidingLog) roomAt(units int) (time.Duration, bool) {
	if units > l.quota {
		return 0, false
	}
	over := l.total + units - l.quota
	for _, e := range l.entries[l.head:] {
		over -= e.units
		if over <= 0 {
			return e.at + l.window, true
		}
	}
	return 0, false // unreachable: total counts the entries
}

func (l *slidingLog) decide(now time.Duration, units int) decision {
	l.expire(now)
	var d decision
	if l.total+units <= l.quota {
		l.entries = append(l.entries, entry{now, units})
		l.total += units
		d.ok = true
	} else {
		d.fitsAt, d.ok = l.roomAt(units)
		d.never, d.ok = !d.ok, false
	}
	d.remaining = max(l.quota-l.total, 0)
	d.resetAt = now // empty: the window is as free as it gets
	if l.head < len(l.entries) {
		d.resetAt = l.entries[l.head].at + l.window
	}
	return d
}
