package quota

import (
	"cmp"
	"math"
	"time"
)

// forget drops the published remaining and reset (silence below a
// publishing threshold, see above). It keeps what the guard learned of the
// server: the limit, the window and how it refills. e.mu is held.
func (e *entry) forget() {
	e.known, e.remaining, e.reset, e.assumed, e.probing, e.probeAt = false, 0, 0, false, false, 0
	e.openNext = true
}

// silence takes a 2xx that publishes nothing, for a key whose figures
// silence made the guard forget, out units sent after its attempt still
// unanswered. A server that publishes only near its limit has shown where
// it starts: just above the most it ever published remaining. Its silence
// says that much remained, no more: a bucket shallower than its limit may
// hold no more than that. So the units out may reach it, and each silent
// answer lifts the room again; admissions that would pass it wait for an
// answer, where otherwise every caller held while the figures stood would
// go at once. e.mu is held.
func (e *entry) silence(n, out int64) {
	e.silentRoom, e.silentAt = max(e.silentRoom, e.maxRemaining+1-out), n
}

// A reading is one response's figures as update takes them: the bucket
// that binds, when it arrived (n), when its attempt went out (sent, 0:
// unknown) and what the guard admitted with it, the units admitted after
// it still unanswered (out), whether it succeeded; and what update derives:
// the reset instant (qr, 0: none ahead) and whether the attempt is the
// latest answered (latest).
type reading struct {
	q       *Quota
	n, sent int64
	out, qr int64
	adm     admission
	success bool
	latest  bool
	held    int64 // what the server held before the attempt took its units
}

// update takes a published bucket from a response (the rules: state.go).
// e.mu is held.
func (e *entry) update(q *Quota, n, sent, out int64, adm admission, success bool) {
	r := reading{q: q, n: n, sent: sent, out: out, adm: adm, success: success}
	e.switchBucket(q)
	if !e.read(&r) {
		return // an answer about a window that is over
	}
	e.learnFrom(&r)
	// The server's figure less the units sent since this attempt, which it
	// cannot have counted yet.
	fresh := q.Remaining - out
	if rate := e.refillPerNs(n); e.gradual && rate > 0 && e.known {
		e.takeGradual(&r, fresh, rate)
		return
	}
	if e.probing && !e.classify(&r) {
		return // an answer to an attempt sent before the probe
	}
	e.take(&r, fresh)
}

// switchBucket forgets what was learned of a bucket when another binds.
func (e *entry) switchBucket(q *Quota) {
	switch {
	case q.Policy != e.policy || q.Key != e.bucket:
		// Another bucket binds now (GitHub's search after its core, on one
		// host): nothing learned of the last one is its.
		e.policy, e.bucket, e.learned, e.capacity, e.bound = q.Policy, q.Key, 0, 0, 0
		e.gradual, e.fixed, e.continuous, e.maxRemaining, e.noRoom = false, false, false, 0, false
		e.rate.restart()
		e.sub = subSecondLearner{}
	case q.Limit > 0 && q.Limit != e.limit:
		// The same bucket with another limit: it refills as before, but
		// neither what it holds nor how fast it gives back is known.
		e.learned, e.capacity = 0, 0
		e.rate.restart()
	}
	if q.Limit > 0 {
		e.limit = q.Limit
	}
	e.window, e.documented = int64(q.Window), q.documented
}

// read notes what the figures say of the server's size and reset, and
// reports false for an answer about a window that is over.
func (e *entry) read(r *reading) bool {
	q := r.q
	if e.subSecondStale(r.sent) {
		return false // an answer about the window before the one opened
	}
	r.held = q.Remaining
	if r.success {
		r.held += r.adm.cost
	}
	e.capacity = max(e.capacity, r.held)
	if e.roomless() && q.Remaining > 0 {
		// Room after all: the first figure the key was admitted freely
		// for says how the server gives units back, as a probe's does.
		e.probing, e.probeSent = true, r.sent
	}
	e.maxRemaining = max(e.maxRemaining, q.Remaining)
	if !q.Reset.IsZero() {
		if r.qr = q.Reset.UnixNano(); r.qr <= r.n {
			if e.fixed || e.probing && r.sent == 0 {
				return false // that window is over: an answer that came late
			}
			// A bucket full by now, or one whose reset rounds to the
			// second: the figures stand, with no reset ahead.
			r.qr = 0
		}
	}
	if r.success && q.Remaining == 0 && (r.qr == 0 || r.qr-r.n <= sameWindow) {
		e.noRoom = true
	}
	if r.success && r.qr != 0 {
		// A reset is never further than a window away, except a
		// penalty's, which only a refusal carries.
		e.learned = max(e.learned, min(r.qr-r.n, maxLearnedWindow))
		if e.openerSent != 0 && r.qr-e.openerSent < cmp.Or(e.bound, math.MaxInt64) && e.countsOwnSince(q, r.adm) {
			// A window that began with the attempt that opened this one
			// (a fixed window counted from the first request, a sliding
			// log whose oldest unit is at most it) ends at most this long
			// after it.
			e.bound = r.qr - e.openerSent
		}
	}
	return true
}

// learnFrom feeds the answer to what the guard learns across answers: the
// round trip, the refill rate, another client's spending, how the server
// refills.
func (e *entry) learnFrom(r *reading) {
	q, n, sent := r.q, r.n, r.sent
	if sent != 0 && n > sent {
		e.minRTT = min(cmp.Or(e.minRTT, n-sent), n-sent)
	}
	// Answers to attempts sent before one answered already may have been
	// counted after it; the latest attempt's answer has no such lag.
	r.latest = sent != 0 && sent >= e.answered && r.adm.upTo > 0
	e.answered = max(e.answered, sent)
	if r.latest && !e.fixed {
		// Full: the server holds about all it can, or shows the most it
		// ever has left when that is at least half what it holds (a
		// bucket whose capacity a costly attempt's units overstate; one
		// that callers keep drained is not full at its highest figure).
		full := r.held >= e.capacity-climbSlack(e.capacity) || q.Remaining > 0 && q.Remaining >= e.maxRemaining && 2*e.maxRemaining >= min(e.limit, e.capacity)
		e.rate.observe(sent, r.adm.upTo, e.refused, q.Remaining, full)
	}
	if r.latest && r.out == 0 {
		// Nothing out: the server has counted every unit sent.
		if e.lastUpTo > 0 && e.latestRem-(e.units-e.lastUpTo)-q.Remaining > climbSlack(e.limit) {
			// It counted more than this client sent since its last such
			// figure: another client spends the same quota.
			e.sharedAt, e.alone = n, 0
		}
		e.lastUpTo, e.latestRem = e.units, q.Remaining
	}
	e.figures++
	e.learnSubSecond(r)
	if e.window > 0 && q.Limit > 0 && q.Remaining <= q.Limit {
		// A bucket's reset is when it is full again: the units it lacks
		// at the rate its policy names, rounded to the second.
		want := float64(q.Limit-q.Remaining) * float64(e.window) / float64(q.Limit)
		got := float64(max(r.qr-n, 0))
		if math.Abs(got-want) <= float64(time.Second+2*time.Duration(e.oneWay())) {
			e.fillFits++
		} else {
			e.fillMisfits++
		}
	}
	if !e.continuous && e.known && (e.showsRefill(q.Remaining, r.qr, n) || e.shallow()) {
		e.gradual, e.continuous, e.fixed, e.fillAt = true, true, false, n
	}
	e.noteClimb(q.Remaining, n)
	e.last = q.Remaining
}

// takeGradual takes the figures of a gradual key refilling rate units a
// nanosecond.
func (e *entry) takeGradual(r *reading, fresh int64, rate float64) {
	e.refill(r.n, rate)
	if r.latest && e.window == 0 && !e.othersSpend(r.n) && e.heldWindow() == 0 {
		// Units back sooner than the rate says, where no window says what
		// comes back when (a sliding log gives back what was spent a
		// window ago): a count no one else spends is the client's to
		// spend. Once the resets have held and shown the window, the
		// count refills at the limit over it, evenly: what the figures
		// show back at once was spent at once, and spent so again it
		// comes back so again (holds.go).
		e.remaining = max(e.remaining, fresh)
	}
	if r.sent != 0 && r.n > r.sent {
		// What came back since the server counted, about half the round
		// trip ago, is not in its figure.
		fresh += int64(float64(r.n-r.sent) / 2 * rate)
	}
	e.remaining, e.reset = min(e.remaining, fresh), r.qr
	e.holdToReset(r)
}

// classify reads the probe's answer: how the server gives units back. It
// reports false for an answer to an attempt sent before the probe.
func (e *entry) classify(r *reading) bool {
	if r.sent != 0 && r.sent < e.probeSent {
		return false
	}
	// Most of the limit with a new window's reset ahead is a fixed window;
	// less, or a bucket full again with no reset ahead, a server that
	// refills as it goes. A throttle says only that it came early.
	mostBack := 2*(r.q.Remaining+1) >= e.limit
	switch {
	case !r.success:
	case mostBack && 2*(r.qr-r.n) >= e.learned:
		e.gradual, e.fixed = false, true
		e.rate.restart()
	case mostBack:
		e.gradual, e.continuous = true, true // full again soon: a bucket
	default:
		e.gradual = e.refillPerNs(r.n) > 0
	}
	e.fillAt = r.n
	return true
}

// take takes the figures of a key that holds until its resets.
func (e *entry) take(r *reading, fresh int64) {
	q, n, qr := r.q, r.n, r.qr
	switch {
	case !e.known || e.assumed || e.reset == 0 || e.reset <= n || qr == 0 || qr > e.reset+sameWindow:
		e.remaining, e.reset, e.assumed, e.probing = fresh, qr, false, false
		e.fillAt, e.floor = n, q.Remaining
		if w := e.limitWindow(); e.fixed && r.success && r.sent != 0 && w > 0 && qr != 0 {
			// A window this attempt found new ends at most a window after
			// it arrived, which was at most a leg before its answer; the
			// next attempt, a leg on its way, goes then. A published reset
			// in whole seconds would hold up to a second longer.
			e.reset = min(qr, n-2*e.oneWay()+w)
		}
	case qr < e.reset-sameWindow:
		return // an older window, answered late
	default:
		if e.fixed && r.out == 0 {
			// Nothing out, in a window that gives nothing back before its
			// reset: the count and the server's agree when no one else
			// spends the quota.
			if q.Remaining < e.remaining {
				e.alone = 0
			} else {
				e.alone++
			}
		}
		e.remaining, e.floor = min(e.remaining, q.Remaining), min(e.floor, q.Remaining)
		e.boundReset(r)
	}
	e.known = true
}
