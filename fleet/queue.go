package fleet

import "time"

// queue is the FIFO of a shared limiter's callers that wait: for the head's
// round trip to Redis, or for permits to free. Its owner's mutex guards it
// and every waiter's fields but ready.
//
// The front waiter is the head: it alone talks to Redis for the queue, and
// hands what it gets to the waiters in order (see limiter.lead). When the
// head leaves, promote makes the next one head. No caller overtakes a
// waiter: a new caller finds permits in the pocket only when nobody waits.
type queue struct {
	front, back *waiter
	queued      int // the queued waiters' costs, added up
}

// A waiter is one queued caller.
type waiter struct {
	prev, next *waiter
	cost       int
	linked     bool
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

func (q *queue) empty() bool { return q.front == nil }

// push appends a waiter of cost.
func (q *queue) push(cost int) *waiter {
	w := &waiter{cost: cost, linked: true, ready: make(chan struct{}, 1), prev: q.back}
	if q.back != nil {
		q.back.next = w
	} else {
		q.front = w
	}
	q.back = w
	q.queued += cost
	return w
}

// remove takes w out of the queue; it does nothing if w has left.
func (q *queue) remove(w *waiter) {
	if !w.linked {
		return
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.front = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.back = w.prev
	}
	w.prev, w.next, w.linked = nil, nil, false
	q.queued -= w.cost
}

// settle takes w out of the queue with state s and signals it.
func (q *queue) settle(w *waiter, s waiterState) {
	q.remove(w)
	w.state = s
	w.signal()
}

// promote makes the front waiter the head, if it is waiting.
func (q *queue) promote() {
	if w := q.front; w != nil && w.state == pending {
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
