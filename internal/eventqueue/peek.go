package eventqueue

// Peek returns the event Pop would return, leaving it in the queue; ok is
// false when the queue is empty. A simulation that runs up to a time looks
// at its next event before it takes it.
func (q *Queue[E]) Peek() (e E, ok bool) {
	if len(q.events) == 0 {
		return e, false
	}
	return q.events[0], true
}
