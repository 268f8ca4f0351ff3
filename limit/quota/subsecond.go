package quota

import "time"

// Windows of a second or less behind bare draft-03 fields.
//
// RateLimit-Reset is delay-seconds: a whole number, rounded up. Behind a
// window of a second or less every figure says 1 (or 0), whatever the
// server: a fixed window, a sliding log or counter, a bucket. Such a reset
// bounds the truth, it is not the truth: the window is at most a second
// long, and a client that took each reset for a new window of Limit, or
// held until it, would spend the limit in bursts and wait out whole
// seconds. When the fields name no window (SharePoint's documented minute
// is only a guess) and many figures have never shown a reset more than a
// second away, from a server that holds more than it shows (it falls
// silent below its publishing threshold, or has shown half its limit
// left), the key's window is taken to be that second: Limit a second.
//
// Which kind of server it is shows in how the figures move between two
// answers to the latest attempts: the later remaining is the earlier one,
// less the units accepted in between, plus what came back. A fixed window
// gives nothing back before its end, so between two figures of one window
// nothing comes back; a sliding log or counter, or a bucket, gives units
// back as it goes. A pair that shows units back counts for a gradual
// refill, one that shows none for a fixed window; the kind the pairs show
// by a wide margin wins, and the counts fade, so that a server whose
// answers stop fitting what was learned is learned again.
//
// A gradual key refills its count at Limit a second (server.go). A fixed
// key holds, once its count is spent, until the window ends: a window
// opened by an attempt sent at s and answered at a began at its arrival,
// at most a leg before a, and ends a window later; the next attempt, a leg
// on its way, may go a window after a less two legs. There it opens the
// next window without a probe: the window is known, and a probe would
// idle a round trip of each second.
type subSecondLearner struct {
	// The baseline: the send time of the latest attempt whose figures were
	// read (0: none), the remaining they showed, the units sent up to it
	// and refused by then.
	at, rem, upTo, refused int64
	// refills, slow and holds count the pairs of figures that showed
	// units back at half the limit a second or more, units back more
	// slowly, and none.
	refills, slow, holds int
	// opener is when the attempt that opened the current window went
	// out (0: none awaited), for its answer to date the window; opened is
	// when the window was opened.
	opener, opened int64
	// spent is when the attempt went out whose figures showed the server
	// spent (0: none since the last recovery); recoveries counts the
	// times a server so spent had room again within two windows.
	spent      int64
	recoveries int
	// longest is the longest time to a reset a success has shown, as
	// learned, but kept when the limit changes: the window does not.
	longest int64
	// log, once a refusal showed the count too generous, holds the units
	// sent (subsecondlog.go).
	log *subSecondLog
}

const (
	// subSecondAfter is how many figures must have shown resets no more
	// than a second away.
	subSecondAfter = 8
	// subSecondPairs is how many pairs must show a kind before it is
	// taken, and subSecondMargin by how many times the other kind's.
	subSecondPairs  = 4
	subSecondMargin = 2
	// subSecondFade is the count of pairs at which both counts are halved.
	subSecondFade = 64
	// subSecondGap is the shortest time between the two attempts of a
	// pair: long enough for units to come back at Limit a second.
	subSecondGap = int64(40 * time.Millisecond)
	// subSecondNoise is the fewest units a pair must show back to count:
	// an attempt sent just before another may reach the server after it.
	subSecondNoise = 3
)

// subSecond says the key's window is at most a second: its figures fit
// one (subSecondLooks), enough of them, and the server has shown units
// back at that pace, in pairs or in room again soon after it was spent. A
// bucket shallower than its limit also shows short resets, and learns its
// refill rate instead (refill.go). e.mu is held.
func (e *entry) subSecond() bool {
	return e.subSecondLooks() && e.figures >= subSecondAfter && e.sub.refills+e.sub.recoveries >= subSecondPairs
}

// subSecondLooks says the figures of a bare draft key (its window
// documented, not published) fit a window of at most a second so far:
// resets never more than a second away, from a server that holds more
// than it shows, and that has not given units back more slowly than half
// its limit a second. e.mu is held.
func (e *entry) subSecondLooks() bool {
	s := &e.sub
	return e.documented && e.learned > 0 && s.longest <= sameWindow &&
		(e.quiet || 2*e.capacity >= e.limit) && !e.shallow() &&
		(s.slow < subSecondPairs || subSecondMargin*s.slow < s.refills+s.recoveries+s.holds)
}

// learnSubSecond reads a pair of figures: the last one read and this one,
// to the latest attempt (r.latest). e.mu is held.
func (e *entry) learnSubSecond(r *reading) {
	s := &e.sub
	if r.success && r.qr != 0 {
		s.longest = max(s.longest, r.qr-r.n)
	}
	if !r.latest || r.sent == 0 {
		return
	}
	if r.q.Remaining <= 1 && s.spent == 0 {
		s.spent = r.sent
	} else if 2*r.q.Remaining >= e.limit {
		s.roomAgain(r.sent, e.learned)
	}
	dt := r.sent - s.at
	if s.at == 0 || !e.known || dt > e.learned/2 || dt < 0 {
		s.at, s.rem, s.upTo, s.refused = r.sent, r.q.Remaining, r.adm.upTo, e.refused
		return
	}
	if dt < subSecondGap {
		return // the baseline stands until the pair spans long enough
	}
	prev := *s
	s.at, s.rem, s.upTo, s.refused = r.sent, r.q.Remaining, r.adm.upTo, e.refused
	accepted := (r.adm.upTo - prev.upTo) - (e.refused - prev.refused)
	if 2*accepted >= e.limit {
		return // enough between them to fill a new window: no pair
	}
	// Answers overtake one another: a unit or two either way is noise.
	switch returned := r.q.Remaining - prev.rem + accepted; {
	case returned >= subSecondNoise && 2*returned*e.learned >= e.limit*dt:
		s.refills++
	case returned >= subSecondNoise:
		s.slow++
	case returned <= 0:
		s.holds++
	}
	s.fade()
	if !e.subSecond() {
		return
	}
	switch fixed := s.holds >= subSecondPairs && s.holds > subSecondMargin*s.refills; {
	case fixed && !e.fixed:
		e.gradual, e.continuous, e.fixed = false, false, true
	case !fixed && !e.gradual:
		e.gradual, e.fixed, e.fillAt = true, false, r.n
	}
}

// subSecondFixed says the key is a fixed window of at most a second.
// e.mu is held.
func (e *entry) subSecondFixed() bool { return e.fixed && !e.gradual && e.subSecond() }

// openSubSecond opens the next window of a fixed key of at most a second
// at n, its held reset: the limit is back, and the attempt about to go
// opens the window; until its answer dates it, the window is taken to end
// a window and a half later. e.mu is held.
func (e *entry) openSubSecond(n int64) {
	w := e.limitWindow()
	e.remaining, e.reset, e.assumed = e.limit, n+w+w/2, false
	e.openNext, e.sub.opener, e.sub.opened = true, n, n
	e.floor = e.limit
}

// fade halves the counts of pairs once they reach subSecondFade, so that
// what the latest answers show outweighs what the older ones did.
func (s *subSecondLearner) fade() {
	if s.refills+s.slow+s.holds+s.recoveries >= subSecondFade {
		s.refills, s.slow, s.holds, s.recoveries = s.refills/2, s.slow/2, s.holds/2, s.recoveries/2
	}
}

// roomAgain takes an answer, to an attempt sent at sent, that shows the
// server with room again (half its limit left, or silence below its
// publishing threshold) after figures that showed it spent: within two
// windows of at most learned, a window that short; later, a slower one.
func (s *subSecondLearner) roomAgain(sent, learned int64) {
	if s.spent == 0 || sent <= s.spent {
		return
	}
	if sent-s.spent <= 2*learned {
		s.recoveries++
	} else {
		s.slow++
	}
	s.spent = 0
	s.fade()
}

// answeredSubSecond takes the answer, at n, to the attempt sent at sent:
// a success that publishes nothing says the server has room again (it
// publishes near its limit only), and the answer to the attempt that
// opened a fixed window dates its end. e.mu is held.
func (e *entry) answeredSubSecond(sent, n int64, silentSuccess bool) {
	e.answerSubSecondLog(sent, n)
	if silentSuccess && sent != 0 && e.documented {
		e.sub.roomAgain(sent, e.learned)
	}
	if e.sub.opener == 0 || sent != e.sub.opener || !e.subSecondFixed() {
		return
	}
	e.sub.opener = 0
	if end := n - 2*e.oneWay() + e.limitWindow(); end < e.reset {
		e.reset = end
	}
}

// subSecondUnsure says the figures of a bare draft key have shown no reset
// more than a second away, but not yet enough to tell a window of a second
// from a longer one spent at a steady pace: the documented window, a
// guess, may be sixty times too long, and no window is given for Limit.
// e.mu is held.
func (e *entry) subSecondUnsure() bool {
	return e.subSecondLooks() && !e.subSecond()
}

// subSecondStale says an answer to an attempt sent at sent is about the
// window before the one a fixed key of at most a second opened: its
// figures say nothing of the new one. e.mu is held.
func (e *entry) subSecondStale(sent int64) bool {
	return sent != 0 && sent < e.sub.opened && e.subSecondFixed()
}
