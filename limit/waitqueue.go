package limit

import (
	"context"
	"sync"
	"time"

	"github.com/headroom-go/headroom/internal/fairshare"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/telemetry"
)

// waitQueue is the queue of callers waiting for permits, shared by every
// blocking shell in this package: in order of priority, first come first
// served within a level, with a share for every level that waits
// (internal/fairshare gives the order and its bound on starvation). A queue
// of callers without a priority is a plain FIFO. It is intrusive (waiters link themselves)
// and holds no lock: its owner guards push, front, remove, grant and wake
// with its own mutex, the one that also guards the decision to queue, so a
// permit can never be granted to a waiter the owner has not seen.
//
// The rules every owner follows:
//
//   - No barging: a new caller takes permits at once only when the queue is
//     empty; otherwise it queues behind the others (fits says whether it may).
//   - Capacity is counted in permits: a queue with limit L holds waiters
//     whose costs add up to at most L.
//   - A waiter leaves the queue exactly once, by grant or by remove, both
//     under the owner's mutex; after that nothing sends on its channel and
//     the owner may recycle it with put.
//
// Two ways to serve it:
//
//   - Hand-off (the bulkhead): whoever frees permits calls grant on the
//     front waiters while they fit; a waiter woken from sleep with
//     w.granted set owns its permits.
//   - Head-of-line (the sliding window): only the front waiter takes
//     permits, itself; it sleeps until the engine says they fit, and after
//     taking them removes itself and wakes the new front with wake.
//
// A waiter whose context ends takes the owner's mutex and looks at
// w.granted: if a grant raced the cancellation it gives the permits back
// (and the owner serves the next waiters); otherwise it removes itself. Either
// way it returns ctx.Err() holding nothing. A head-of-line waiter checks ctx
// before it takes permits, so for it the race cannot arise.
//
// A typical waiting caller, with mu the owner's mutex:
//
//	mu.Lock()
//	if q.empty() && tryTake(cost) { mu.Unlock(); return granted }
//	if !q.fits(cost) { mu.Unlock(); return queue full }
//	w := q.push(cost, level)
//	mu.Unlock()
//	woke := w.sleep(ctx, 0) // or until the engine's readyAt, for a head-of-line waiter
//	... under mu: granted, or remove and serve ...
//	q.put(w)
type waitQueue struct {
	head, tail *waiter
	queued     int // sum of the queued waiters' costs
	limit      int // most permits' worth that may wait
	order      fairshare.Order
	pool       sync.Pool
}

// A waiter is one queued caller. Its fields other than ready and timer are
// guarded by the owner's mutex.
type waiter struct {
	prev, next *waiter
	cost       int
	level      int // Priority.level
	tag        fairshare.Tag
	linked     bool
	granted    bool          // set by grant: the owner handed over the permits
	shed       bool          // set by shed: refused to make room for a higher level
	ready      chan struct{} // capacity 1: grant or wake
	timer      *time.Timer   // sleep's timer, kept across reuses
	readyAt    time.Duration // a booked waiter's due time (PerSecond); owner's mu
	lease      Lease         // what grant handed over, for an owner that makes it then (Concurrency)
}

// The results of sleep.
const (
	wokenReady = iota // grant or wake signalled the waiter
	wokenTimer        // the sleep's duration passed
	wokenDone         // the context ended
)

// fits reports whether a caller of cost may queue: the queued permits plus
// cost stay within the limit.
func (q *waitQueue) fits(cost int) bool { return q.queued+cost <= q.limit }

// empty reports whether nobody waits.
func (q *waitQueue) empty() bool { return q.head == nil }

// front is the oldest waiter, or nil.
func (q *waitQueue) front() *waiter { return q.head }

// push queues a waiter of cost and level (Priority.level) at its place in
// the order and returns it: behind every waiter that stays ahead of it
// (fairshare.Tag.Ahead), ahead of the rest, which it has passed. Waiters
// of one level go in the order they came.
//
// The waiter comes from the queue's own pool: its channel and timer belong to
// the goroutine group (synctest bubble) that created the queue's limiter, so
// they must never cross into another limiter's pool.
func (q *waitQueue) push(cost, level int) *waiter {
	w, _ := q.pool.Get().(*waiter)
	if w == nil {
		w = &waiter{ready: make(chan struct{}, 1)}
	}
	w.cost, w.level, w.granted, w.shed, w.linked = cost, level, false, false, true
	w.tag = q.order.Join(level, cost)
	// Walk back from the tail past the waiters it passes: none when
	// every waiter has one level.
	after := q.tail
	for after != nil && !after.tag.Ahead(w.tag) {
		after = after.prev
	}
	w.prev = after
	if after != nil {
		w.next, after.next = after.next, w
	} else {
		w.next, q.head = q.head, w
	}
	if w.next != nil {
		w.next.prev = w
	} else {
		q.tail = w
	}
	q.queued += cost
	return w
}

// ahead is the cost queued ahead of w, counted from the back: a waiter
// that passed nobody is the tail, and then it costs nothing to count.
func (q *waitQueue) ahead(w *waiter) int {
	n := q.queued - w.cost
	for b := w.next; b != nil; b = b.next {
		n -= b.cost
	}
	return n
}

// remove takes w out of the queue without granting it: its context ended,
// or it was refused. It does nothing if w has already left. The owner
// decides what the new front needs (a wake, or a grant now that a blocking
// head is gone).
func (q *waitQueue) remove(w *waiter) { q.leave(w, false) }

// served takes w out of the queue as served: its permits are its own (the
// owner took them for it, or its turn has come).
func (q *waitQueue) served(w *waiter) { q.leave(w, true) }

// leave takes w out of the queue, served or not.
func (q *waitQueue) leave(w *waiter, served bool) {
	if !w.linked {
		return
	}
	q.order.Leave(w.level, w.tag, served)
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.linked = nil, nil, false
	q.queued -= w.cost
}

// grant takes w out of the queue, marks it granted and signals it. The owner
// has already taken w.cost permits on w's behalf.
func (q *waitQueue) grant(w *waiter) {
	q.served(w)
	w.granted = true
	w.signal()
}

// shed makes room for a caller of cost and level in a full queue by taking
// out waiters of lower levels: the lowest level first and, within it, the
// latest first, so that the waiters who have waited longest keep their
// place. Each is marked shed and signalled, after gone (which the owner
// uses to give back what was booked for it) has seen it, still linked. It
// reports whether the caller now fits; when shedding every lower waiter
// would not make room it takes out none.
func (q *waitQueue) shed(cost, level int, gone func(*waiter)) bool {
	need := q.queued + cost - q.limit
	if need <= 0 {
		return true
	}
	lower := 0
	for w := q.head; w != nil; w = w.next {
		if w.level < level {
			lower += w.cost
		}
	}
	if lower < need {
		return false
	}
	for l := 0; l < level && need > 0; l++ {
		for w := q.tail; w != nil && need > 0; {
			prev := w.prev
			if w.level == l {
				need -= w.cost
				gone(w)
				q.remove(w)
				w.shed = true
				w.signal()
			}
			w = prev
		}
	}
	return true
}

// wake signals w without granting it: "look again" (for the head-of-line
// waiter, "you are the front now").
func (q *waitQueue) wake(w *waiter) { w.signal() }

// signal leaves one pending signal on w.ready; more would say nothing new.
func (w *waiter) signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}

// put recycles w. The owner calls it once w has left the queue and its
// goroutine is done with it; nothing signals an unlinked waiter, so draining
// the one possible pending signal leaves the channel empty for the next use.
func (q *waitQueue) put(w *waiter) {
	select {
	case <-w.ready:
	default:
	}
	w.granted, w.shed, w.lease = false, false, Lease{}
	q.pool.Put(w)
}

// sleep blocks until w is signalled, d has passed, or ctx ends, and says
// which. A d of 0 or less sets no timer: only a signal or ctx wakes it. Call
// it without holding the owner's mutex.
func (w *waiter) sleep(ctx context.Context, d time.Duration) int {
	if d <= 0 {
		select {
		case <-w.ready:
			return wokenReady
		case <-ctx.Done():
			return wokenDone
		}
	}
	if w.timer == nil {
		w.timer = time.NewTimer(d)
	} else {
		w.timer.Reset(d)
	}
	select {
	case <-w.ready:
		w.timer.Stop()
		return wokenReady
	case <-w.timer.C:
		return wokenTimer
	case <-ctx.Done():
		w.timer.Stop()
		return wokenDone
	}
}

// shedError is the refusal of a waiter shed to make room for a higher
// level, counted as a denial.
func shedError(limiter string, m *metrics.Limiter, cost int) error {
	m.DeniedN(telemetry.ReasonShed, cost)
	return &RateLimitedError{Limiter: limiter, Reason: telemetry.ReasonShed}
}

// waitEnded is ContextEnded's error for a caller of m's limiter, counted
// as a denial when it is a refusal (a deadline).
func waitEnded(ctx context.Context, limiter string, m *metrics.Limiter, cost int) error {
	err := ContextEnded(ctx, limiter)
	if _, refused := err.(*RateLimitedError); refused {
		m.DeniedN(telemetry.ReasonDeadline, cost)
	}
	return err
}
