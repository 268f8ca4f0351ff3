package fleet

import (
	"container/list"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
)

// queue is the FIFO of a shared limiter's callers that wait: for the head's
// round trip to Redis, or for permits to free. Its owner's mutex guards it
// and every waiter's fields but ready.
//
// The front waiter is the head: it alone talks to Redis for the queue, and
// hands what it gets to the waiters in order (see limiter.lead). When the
// head leaves, promote makes the next one head. No caller overtakes a
// waiter: a new caller finds permits in the pocket only when nobody waits.
type queue struct {
	l       list.List // of *waiter
	queued  int       // the queued waiters' costs, added up
	metrics *metrics.Limiter
}

// A waiter is one queued caller.
type waiter struct {
	elem     *list.Element // its place in the queue; nil once it has left
	cost     int
	queuedAt time.Duration // when it queued, on the limiter's clock
	// waited is set once the waiter waits for more than its own round
	// trip: behind another caller, or asleep until permits free.
	waited bool
	// state is what the head (or a failure) decided for the waiter; the
	// waiter reads it when ready is signalled.
	state      waiterState
	grantedAt  time.Duration // granted: when, on the limiter's clock
	retryAfter time.Duration // refused: when to come back
	reason     string        // refused: why
	err        error         // failed: why Redis could not answer
	ready      chan struct{} // capacity 1
}

type waiterState uint8

const (
	pending waiterState = iota // waiting
	granted                    // its permits are taken for it
	refused                    // turned away: reason, retryAfter
	failed                     // Redis failed: the failure policy decides
	leading                    // it is the head now
)

func (q *queue) empty() bool { return q.l.Len() == 0 }

// front is the head, or nil.
func (q *queue) front() *waiter { return waiterOf(q.l.Front()) }

// behind is the waiter after w, or nil.
func (q *queue) behind(w *waiter) *waiter {
	if w.elem == nil {
		return nil
	}
	return waiterOf(w.elem.Next())
}

func waiterOf(e *list.Element) *waiter {
	if e == nil {
		return nil
	}
	return e.Value.(*waiter)
}

// push appends a waiter of cost that queued at now.
func (q *queue) push(cost int, now time.Duration) *waiter {
	w := &waiter{cost: cost, queuedAt: now, ready: make(chan struct{}, 1)}
	w.elem = q.l.PushBack(w)
	q.queued += cost
	q.metrics.QueueAdd(int64(cost))
	return w
}

// remove takes w out of the queue; it does nothing if w has left.
func (q *queue) remove(w *waiter) {
	if w.elem == nil {
		return
	}
	q.l.Remove(w.elem)
	w.elem = nil
	q.queued -= w.cost
	q.metrics.QueueAdd(-int64(w.cost))
}

// settle takes w out of the queue with state s and signals it.
func (q *queue) settle(w *waiter, s waiterState) {
	q.remove(w)
	w.state = s
	w.signal()
}

// promote makes the front waiter the head, if it is waiting.
func (q *queue) promote() {
	if w := q.front(); w != nil && w.state == pending {
		w.state = leading
		w.signal()
	}
}

func (w *waiter) signal() {
	select {
	case w.ready <- struct{}{}:
	default:
	}
}
