package adaptive

import "time"

// Release reports at now the outcome o of a request of cost units that the
// Rate admitted and that was sent at sentAt, with the server's Retry-After
// (0 if none) for a throttle, and says what it changed:
//
//   - Success counts the units into the measured send rate and may raise
//     the rate (see onSuccess for the rules);
//   - Throttled may cut the rate and pause it (see onThrottled);
//   - Dropped and Ignored change nothing: a timeout, a network error or a
//     5xx that is not a throttle says nothing about the rate the
//     dependency accepts.
//
// retryAfter is read for a throttle only.
func (r *Rate) Release(now, sentAt time.Duration, cost int, o Outcome, retryAfter time.Duration) Change {
	switch o {
	case Success:
		return r.onSuccess(now, sentAt, cost)
	case Throttled:
		return r.onThrottled(now, sentAt, cost, retryAfter)
	}
	return 0
}
