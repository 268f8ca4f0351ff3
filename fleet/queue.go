package fleet

import (
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
//
// Waiters link to each other and are kept for reuse, so that queueing —
// which even a caller alone does, as the head of its own round trip —
// allocates nothing. (They are the limiter's own, not a sync.Pool's: a
// waiter's channel belongs to the testing/synctest bubble it was made in.)
type queue struct {
	first, last *waiter
	queued      int // the queued waiters' costs, added up
	metrics     *metrics.Limiter
	spare       []*waiter // done with, for reuse
}

// maxSpare is how many waiters a queue keeps for reuse: its callers'
// concurrency, up to this.
const maxSpare = 64

// A waiter is one queued caller.
type waiter struct {
	prev, next *waiter
	queued     bool // it is in the queue
	cost       int
	queuedAt   time.Duration // when it queued, on the limiter's clock
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
	ready      chan struct{} // capacity 1, kept from use to use
}

type waiterState uint8

const (
	pending waiterState = iota // waiting
	granted                    // its permits are taken for it
	refused                    // turned away: reason, retryAfter
	failed                     // Redis failed: the failure policy decides
	leading                    // it is the head now
)

func (q *queue) empty() bool { return q.first == nil }

// front is the head, or nil.
func (q *queue) front() *waiter { return q.first }

// behind is the waiter after w, or nil.
func (q *queue) behind(w *waiter) *waiter {
	if !w.queued {
		return nil
	}
	return w.next
}

// push appends a waiter of cost that queued at now.
func (q *queue) push(cost int, now time.Duration) *waiter {
	var w *waiter
	if n := len(q.spare); n > 0 {
		w, q.spare = q.spare[n-1], q.spare[:n-1]
		select {
		case <-w.ready: // a signal its last caller did not need
		default:
		}
	} else {
		w = &waiter{ready: make(chan struct{}, 1)}
	}
	*w = waiter{ready: w.ready, queued: true, cost: cost, queuedAt: now, prev: q.last}
	if q.last != nil {
		q.last.next = w
	} else {
		q.first = w
	}
	q.last = w
	q.queued += cost
	q.metrics.QueueAdd(int64(cost))
	return w
}

// recycle keeps w, whose caller is done with it, for reuse: it is out of
// the queue with its state final, and nothing signals it any more.
func (q *queue) recycle(w *waiter) {
	if len(q.spare) < maxSpare {
		w.err = nil
		q.spare = append(q.spare, w)
	}
}

// remove takes w out of the queue; it does nothing if w has left.
func (q *queue) remove(w *waiter) {
	if !w.queued {
		return
	}
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.first = w.next
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.last = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
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
