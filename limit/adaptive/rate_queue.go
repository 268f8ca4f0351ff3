package adaptive

import (
	"math"
	"time"
)

// Enqueue queues a request of cost (≥ 1) units that TryAcquire refused,
// behind every request queued before it, and marks that requests waited.
// It returns the waiter's ID and the wait expected at the current rate,
// which is what TryAcquire's retryAfter said. A wait longer than MaxWait is
// refused: ok is false, nothing is queued, and wait is how much longer it
// is. Bounding the queue, and refusing a wait that would outlast a
// deadline, are the caller's, with TryAcquire's retryAfter in hand.
func (r *Rate) Enqueue(now time.Duration, cost int) (id uint64, wait time.Duration, ok bool) {
	return r.EnqueueLevel(now, cost, defaultLevel)
}

// waitFor is how long, from now, until a request of cost can go behind
// ahead units of waiters, at the current rate.
func (r *Rate) waitFor(now time.Duration, ahead int64, cost int) time.Duration {
	start := max(now, r.lastFill)
	// The waiters ahead go in turn, each once the bucket holds its need
	// (≤ its cost), so the last goes once the bucket has gathered all
	// their costs and its own need: exact while the rate holds.
	deficit := float64(ahead) + r.need(cost) - r.tokensAt(now)
	if deficit <= epsilon {
		return since(start, now)
	}
	return sat(since(start, now), durationFor(deficit, r.perNs))
}

// durationFor is the time to gather units at perNs, rounded up.
func durationFor(units, perNs float64) time.Duration {
	d := math.Ceil(units / perNs)
	if d >= float64(math.MaxInt64/2) {
		return time.Duration(math.MaxInt64 / 2)
	}
	return time.Duration(d)
}

// Next reports when the queue's head can next leave: when its units will
// be there at the current rate, or when it will have waited MaxWait,
// whichever is first; saturated at math.MaxInt64 (never, in practice), so
// that Dequeue at that time lets the head go. ok is false when nobody
// waits. A shell sets its timer for at and calls Dequeue then; any rate
// change moves at, so ask again after each call that reports a Change.
func (r *Rate) Next(now time.Duration) (at time.Duration, ok bool) {
	if r.qHead >= len(r.q) {
		return 0, false
	}
	h := r.q[r.qHead]
	at = sat(now, r.waitFor(now, 0, h.cost))
	if r.reserveHeld(now, h.level) {
		at = max(at, sat(now, r.bgWait(now, h.cost)))
		if i := r.aboveHeldHead(now); i >= 0 {
			at = min(at, sat(now, r.waitFor(now, 0, r.q[i].cost)))
		}
	}
	at = min(at, sat(h.enqueued, r.cfg.MaxWait))
	if i := r.oldestBehind(); i >= 0 {
		at = min(at, sat(r.q[i].enqueued, r.cfg.MaxWait))
	}
	return max(at, now), true
}

// Dequeue removes the queue's head if it can leave at now: Granted with its
// units taken from the bucket, or not Granted once it has waited MaxWait.
// Call it until ok is false: several waiters may leave at once.
func (r *Rate) Dequeue(now time.Duration) (w Waiter, ok bool) {
	if r.qHead >= len(r.q) {
		return Waiter{}, false
	}
	if w, ok := r.expireBehind(now); ok {
		return w, true
	}
	if w, ok := r.passHeld(now); ok {
		return w, true
	}
	h := r.q[r.qHead]
	r.refill(now)
	switch {
	case now >= r.lastFill && r.tokens+epsilon >= r.need(h.cost) && !r.bgHolds(now, h):
		r.tokens -= float64(h.cost)
		r.counts.Units += int64(h.cost)
		r.admitted(now)
		r.sentAbove(now, h.level, h.cost)
		w.Granted = true
	case now-h.enqueued >= r.cfg.MaxWait:
		r.counts.TimedOut++
	default:
		return Waiter{}, false
	}
	r.order.Leave(h.level, h.tag, w.Granted)
	r.pop()
	w.ID, w.Cost = h.id, h.cost
	return w, true
}

func (r *Rate) pop() {
	r.qUnits -= int64(r.q[r.qHead].cost)
	r.q[r.qHead] = waiter{}
	r.qHead++
	if r.qHead == len(r.q) {
		r.q, r.qHead = r.q[:0], 0
	} else if r.qHead >= 64 && r.qHead*2 >= len(r.q) {
		n := copy(r.q, r.q[r.qHead:])
		clear(r.q[n:])
		r.q, r.qHead = r.q[:n], 0
	}
}

// Cancel removes waiter id from the queue (its context ended) and reports
// whether it was there. No units were taken for it. The waiters behind may
// now be able to leave: call Dequeue.
func (r *Rate) Cancel(now time.Duration, id uint64) bool {
	for i := r.qHead; i < len(r.q); i++ {
		if r.q[i].id == id {
			r.qUnits -= int64(r.q[i].cost)
			r.order.Leave(r.q[i].level, r.q[i].tag, false)
			copy(r.q[i:], r.q[i+1:])
			r.q[len(r.q)-1] = waiter{}
			r.q = r.q[:len(r.q)-1]
			if r.qHead == len(r.q) {
				r.q, r.qHead = r.q[:0], 0
			}
			return true
		}
	}
	return false
}
