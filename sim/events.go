package sim

import (
	"container/heap"
	"time"
)

type eventKind uint8

const (
	evArrival  eventKind = iota // a new request at an instance
	evAttempt                   // a request (re)tries: asks its limiter
	evWake                      // an instance's limiter may grant or expire waiters
	evServer                    // a request reaches the API
	evResponse                  // the API's answer reaches the client
	evJoin                      // an instance joins
	evSample                    // the per-second time series
)

// event is small and holds no pointer, so that the heap moves it cheaply;
// req indexes runner.reqs.
type event struct {
	at   time.Duration
	seq  uint64 // ties break in the order events were scheduled
	req  int32
	inst int32
	kind eventKind
}

type eventQueue []event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// loop is the virtual clock and the event queue.
type loop struct {
	now    time.Duration
	seq    uint64
	events eventQueue
}

// schedule and next use container/heap through Fix, which moves values
// without boxing them in an interface (heap.Push and heap.Pop would
// allocate for each event).
func (l *loop) schedule(e event) {
	if e.at < l.now {
		e.at = l.now
	}
	l.seq++
	e.seq = l.seq
	l.events = append(l.events, e)
	heap.Fix(&l.events, len(l.events)-1)
}

func (l *loop) next() (event, bool) {
	n := len(l.events)
	if n == 0 {
		return event{}, false
	}
	e := l.events[0]
	l.events[0] = l.events[n-1]
	l.events = l.events[:n-1]
	if n > 1 {
		heap.Fix(&l.events, 0)
	}
	l.now = e.at
	return e, true
}
