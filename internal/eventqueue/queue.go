package eventqueue

// Event is what a Queue holds: Before reports whether the event comes
// before other. It must be a strict order: never both a.Before(b) and
// b.Before(a), and never a.Before(a).
type Event[E any] interface {
	Before(other E) bool
}

// Queue is a min-heap of events: Pop returns an event that no other event
// in the queue comes before. The zero value is an empty queue.
type Queue[E Event[E]] struct {
	events []E
}

// Len is the number of events in the queue.
func (q *Queue[E]) Len() int { return len(q.events) }

// Push adds e to the queue.
func (q *Queue[E]) Push(e E) {
	q.events = append(q.events, e)
	q.up(len(q.events) - 1)
}

// Pop removes and returns the first event; ok is false when the queue is
// empty. Like container/heap's Pop, it moves the last event to the root
// and sifts it down.
func (q *Queue[E]) Pop() (e E, ok bool) {
	n := len(q.events) - 1
	if n < 0 {
		return e, false
	}
	e = q.events[0]
	q.events[0] = q.events[n]
	var zero E
	q.events[n] = zero // drop what the event points to
	q.events = q.events[:n]
	q.down(0)
	return e, true
}

// up moves the event at j towards the root while it comes before its
// parent, as container/heap's up does.
func (q *Queue[E]) up(j int) {
	h := q.events
	e := h[j]
	for j > 0 {
		parent := (j - 1) / 2
		if !e.Before(h[parent]) {
			break
		}
		h[j] = h[parent]
		j = parent
	}
	h[j] = e
}

// down moves the event at i towards the leaves while a child comes before
// it, taking the right child only when it comes before the left, as
// container/heap's down does.
func (q *Queue[E]) down(i int) {
	h := q.events
	n := len(h)
	if n == 0 {
		return
	}
	e := h[i]
	for {
		child := 2*i + 1
		if child >= n || child < 0 { // child < 0 after int overflow
			break
		}
		if right := child + 1; right < n && h[right].Before(h[child]) {
			child = right
		}
		if !h[child].Before(e) {
			break
		}
		h[i] = h[child]
		i = child
	}
	h[i] = e
}
