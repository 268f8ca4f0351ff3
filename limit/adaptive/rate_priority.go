package adaptive

import (
	"slices"
	"time"
)

// The levels of EnqueueLevel, lowest first: a caller's priority as an
// index, background work, the default, and critical work.
const (
	BackgroundLevel = 0
	DefaultLevel    = 1
	CriticalLevel   = 2
)

// EnqueueLevel queues a request of cost (≥ 1) units and level (one of the
// Level constants) that TryAcquire refused, at its place among the
// waiters: in order of level, first come first served within a level,
// with a share for every level that waits, so that a lower level is never
// starved (package internal/fairshare of this module states the order and
// its bound). It marks that requests waited, and returns the waiter's ID
// and the wait expected at the current rate behind the units queued ahead
// of its place. A wait longer than MaxWait is refused: ok is false,
// nothing is queued, and wait is how much longer it is. Bounding the
// queue, and refusing a wait that would outlast a deadline, are the
// caller's.
//
// MaxWait is checked at the queue's front: a waiter that others passed
// leaves unserved once it is the front and has waited MaxWait, which the
// bound on passing keeps finite.
func (r *Rate) EnqueueLevel(now time.Duration, cost, level int) (id uint64, wait time.Duration, ok bool) {
	r.waited = true
	r.refill(now)
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
