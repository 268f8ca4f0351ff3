package adaptive

import (
	"slices"
	"time"
)

// defaultLevel is the level of a request without a priority (Enqueue).
const defaultLevel = 1

// EnqueueLevel queues a request of cost (≥ 1) units and level (its
// priority: 0 for background work, 1 the default, 2 critical work) that
// TryAcquire refused, at its place among the
// waiters: in order of level, first come first served within a level,
// with a share for every level that waits, so that a lower level is never
// starved (package internal/fairshare of this module states the order and
// its bound). It marks that requests waited (unless only the reserve holds the request: TryAcquireLevel), and returns the waiter's ID
// and the wait expected at the current rate behind the units queued ahead
// of its place. A wait longer than MaxWait is refused: ok is false,
// nothing is queued, and wait is how much longer it is. Bounding the
// queue, and refusing a wait that would outlast a deadline, are the
// caller's.
//
// MaxWait holds for every waiter: one that others passed leaves unserved
// once it has waited MaxWait, wherever it stands (Dequeue, Next).
func (r *Rate) EnqueueLevel(now time.Duration, cost, level int) (id uint64, wait time.Duration, ok bool) {
	if !r.reserveAlone(now, level, cost) {
		r.waited = true
	}
	r.refill(now)
	r.asking(now, level)
	w := waiter{cost: cost, enqueued: now, level: level, tag: r.order.Join(level, cost)}
	at, ahead := len(r.q), r.qUnits
	for at > r.qHead && !r.q[at-1].tag.Ahead(w.tag) {
		at--
		ahead -= int64(r.q[at].cost)
	}
	wait = r.waitFor(now, ahead, cost)
	if wait > r.cfg.MaxWait {
		r.order.Leave(level, w.tag, false)
		return 0, wait - r.cfg.MaxWait, false
	}
	r.nextID++
	w.id = r.nextID
	r.q = slices.Insert(r.q, at, w)
	r.qUnits += int64(cost)
	return w.id, wait, true
}

// Shed makes room for a request of cost units and level in a queue that
// may hold limit units, by taking out waiters of lower levels: the lowest
// level first and, within it, the latest first, so that those who have
// waited longest keep their place. It appends the IDs of the waiters it
// took out to ids and returns them, with ok reporting whether the request
// now fits; when taking out every lower waiter would not make room it
// takes out none. No units were taken for the waiters it takes out.
func (r *Rate) Shed(cost, level int, limit int64, ids []uint64) (_ []uint64, ok bool) {
	need := r.qUnits + int64(cost) - limit
	if need <= 0 {
		return ids, true
	}
	lower := int64(0)
	for _, w := range r.q[r.qHead:] {
		if w.level < level {
			lower += int64(w.cost)
		}
	}
	if lower < need {
		return ids, false
	}
	for l := 0; l < level && need > 0; l++ {
		for i := len(r.q) - 1; i >= r.qHead && need > 0; i-- {
			if w := r.q[i]; w.level == l {
				need -= int64(w.cost)
				ids = append(ids, w.id)
				r.Cancel(0, w.id)
			}
		}
	}
	return ids, true
}

// oldestBehind is the index of the waiter behind the queue's front that
// joined first, or -1. Only a queue of several levels needs it: in a queue
// of one level the front joined first.
func (r *Rate) oldestBehind() int {
	if !r.order.Mixed() {
		return -1
	}
	oldest := -1
	for i := r.qHead + 1; i < len(r.q); i++ {
		if oldest < 0 || r.q[i].enqueued < r.q[oldest].enqueued {
			oldest = i
		}
	}
	return oldest
}

// expireBehind takes out, not granted, the waiter behind the front that
// has waited MaxWait at now, if there is one.
func (r *Rate) expireBehind(now time.Duration) (Waiter, bool) {
	i := r.oldestBehind()
	if i < 0 || now-r.q[i].enqueued < r.cfg.MaxWait {
		return Waiter{}, false
	}
	w := r.q[i]
	r.counts.TimedOut++
	r.Cancel(now, w.id)
	return Waiter{ID: w.id, Cost: w.cost}, true
}

// ShedAhead makes the wait of waiter id, a request with maxWait left
// before its deadline, fit within it at now, by taking out waiters of
// lower levels queued ahead of it (the share every level has lets some in
// ahead): the lowest level first and, within it, the nearest ahead of id
// first, so that those who have waited longest keep their place. It
// appends the IDs it took out to ids and returns them, with id's wait
// and ok reporting whether it fits; when taking out every lower waiter
// ahead would not make it fit, or id is not queued, it takes out none.
// No units were taken for the waiters it takes out.
func (r *Rate) ShedAhead(now time.Duration, id uint64, maxWait time.Duration, ids []uint64) (_ []uint64, wait time.Duration, ok bool) {
	at := -1
	for i := r.qHead; i < len(r.q); i++ {
		if r.q[i].id == id {
			at = i
			break
		}
	}
	if at < 0 {
		return ids, 0, false
	}
	x := r.q[at]
	ahead, lower := int64(0), int64(0)
	for _, w := range r.q[r.qHead:at] {
		ahead += int64(w.cost)
		if w.level < x.level {
			lower += int64(w.cost)
		}
	}
	if wait = r.waitFor(now, ahead, x.cost); wait <= maxWait {
		return ids, wait, true
	}
	if r.waitFor(now, ahead-lower, x.cost) > maxWait {
		return ids, wait, false
	}
	for l := 0; l < x.level && wait > maxWait; l++ {
		// Taking out the waiter at i moves only those behind it, id
		// among them, so the ones before i keep their index.
		for i := at - 1; i >= r.qHead && wait > maxWait; i-- {
			if w := r.q[i]; w.level == l {
				ahead -= int64(w.cost)
				ids = append(ids, w.id)
				r.Cancel(now, w.id)
				at--
				wait = r.waitFor(now, ahead, x.cost)
			}
		}
	}
	return ids, wait, true
}
