package quota

// A log of the client's own units, for a window of at most a second that
// refills as it goes but has refused an attempt its count had room for.
//
// A sliding log of a second gives back each unit a second after it came:
// a count refilled at Limit a second is right on average, and wrong by
// the jitter of the legs at every instant, which a window that short
// turns into refusals, each followed by a Retry-After of a whole second.
// Once such a refusal has shown it, the key also keeps a log of the units
// it sent: each counts until the server must have let it go, a window
// after it arrived — at most a leg before its answer, so a window after
// the answer less two legs (before the answer, a window and a half after
// it went). An attempt goes only while the units that still count and
// its own fit the limit less the reserve. A bucket, which takes bursts
// and refills at its rate, never shows such a refusal and keeps no log.

// subSecondLogSize is the most units the log holds: a limit a second above
// it is paced by the count alone.
const subSecondLogSize = 128

// subSecondLog is the log: for each unit sent, when it stops counting.
type subSecondLog struct {
	sent, until [subSecondLogSize]int64
	next, n     int // the next slot, and the slots in use
}

// strictSubSecond takes a refusal of an attempt the count of a gradual key
// of at most a second had room for: the key keeps a log from now on.
// e.mu is held.
func (e *entry) strictSubSecond() {
	if e.sub.log == nil && e.gradual && e.subSecond() && e.limit <= subSecondLogSize {
		e.sub.log = new(subSecondLog)
	}
}

// subSecondLogged says the key paces by its log. e.mu is held.
func (e *entry) subSecondLogged() bool {
	return e.sub.log != nil && e.gradual && e.subSecond() && e.limit <= subSecondLogSize
}

// subSecondWait is how long an attempt of cost units at n waits for the
// log to let it go, with res units kept in reserve; 0: it may go. e.mu is
// held.
func (e *entry) subSecondWait(n, cost, res int64) int64 {
	if !e.subSecondLogged() {
		return 0
	}
	l := e.sub.log
	room := e.limit - res - cost
	var counted int64
	for i := range l.n {
		if l.until[(l.next-1-i+subSecondLogSize)%subSecondLogSize] > n {
			counted++
		}
	}
	if counted <= room {
		return 0
	}
	// The oldest units go first: wait for as many to stop counting as
	// the attempt lacks.
	excess, wait := counted-room, int64(0)
	for i := l.n - 1; i >= 0 && excess > 0; i-- {
		if u := l.until[(l.next-1-i+subSecondLogSize)%subSecondLogSize]; u > n {
			wait = max(wait, u-n)
			excess--
		}
	}
	return max(wait, 1)
}

// logSubSecond notes cost units sent at n. e.mu is held.
func (e *entry) logSubSecond(n, cost int64) {
	if !e.subSecondLogged() {
		return
	}
	l, w := e.sub.log, e.limitWindow()
	for range cost {
		l.sent[l.next], l.until[l.next] = n, n+w+w/2
		l.next = (l.next + 1) % subSecondLogSize
		l.n = min(l.n+1, subSecondLogSize)
	}
}

// answerSubSecondLog dates the units of the attempt sent at sent,
// answered at n. e.mu is held.
func (e *entry) answerSubSecondLog(sent, n int64) {
	if sent == 0 || !e.subSecondLogged() {
		return
	}
	l := e.sub.log
	until := n - 2*e.oneWay() + e.limitWindow()
	for i := range l.n {
		j := (l.next - 1 - i + subSecondLogSize) % subSecondLogSize
		if l.sent[j] < sent {
			break
		}
		if l.sent[j] == sent {
			l.until[j] = min(l.until[j], until)
		}
	}
}
