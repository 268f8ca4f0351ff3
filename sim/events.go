package sim

import (
	"time"

	"github.com/headroom-go/headroom/internal/eventqueue"
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

// event is small and holds no pointer, so that the queue moves it cheaply;
// req indexes runner.reqs.
type event struct {
	at   time.Duration
	seq  uint64 // ties break in the order events were scheduled
	req  int32
	inst int32
	kind eventKind
}

// Before orders events by time, then in the order they were scheduled.
func (e event) Before(o event) bool {
	if e.at != o.at {
		return e.at < o.at
	}
	return e.seq < o.seq
}

// loop is the virtual clock and the event queue.
type loop struct {
	now    time.Duration
	seq    uint64
	events eventqueue.Queue[event]
}

// schedule queues e, at now at the earliest.
func (l *loop) schedule(e event) {
	if e.at < l.now {
		e.at = l.now
	}
	l.seq++
	e.seq = l.seq
	l.events.Push(e)
}

// next takes the first event off the queue and moves the clock to it.
func (l *loop) next() (event, bool) {
	e, ok := l.events.Pop()
	if ok {
		l.now = e.at
	}
	return e, ok
}
