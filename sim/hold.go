package sim

import "time"

// The bounds of every queue the simulator holds requests in: the adaptive
// rate limiter's default queue (limit.Options.QueueLimit, 500 units, which
// the simulator's requests of one unit each make 500 requests) and its
// default MaxWait.
const (
	queueLimit = 500
	maxWait    = 100 * time.Second
)

// holdQueue is the FIFO queue the simulator keeps for an engine core that
// has none of its own — quota.Guard and adaptive.Concurrency decide, and
// their shells queue with goroutines and timers — bounded as the adaptive
// rate limiter's queue is: at most limit requests, each held at most
// maxWait.
type holdQueue struct {
	q       []*request
	limit   int
	maxWait time.Duration
}

func (h *holdQueue) empty() bool { return len(h.q) == 0 }
func (h *holdQueue) len() int    { return len(h.q) }

// hold queues req at now, or rejects it when the queue is full.
func (h *holdQueue) hold(now time.Duration, req *request) admit {
	if len(h.q) >= h.limit {
		return rejected
	}
	req.held = now
	h.q = append(h.q, req)
	return queued
}

// release goes through the queue from its head: it rejects a request held
// for maxWait and grants one that try lets go, and stops at the first that
// must wait. It then returns when to poll again: after the wait try named,
// or, when try names none (only a response can free the core), at that
// request's deadline.
func (h *holdQueue) release(now time.Duration, out *pollOut, try func(*request) (ok bool, wait time.Duration)) (time.Duration, bool) {
	for len(h.q) > 0 {
		req := h.q[0]
		deadline := req.held + h.maxWait
		if now >= deadline {
			out.rejected = append(out.rejected, req)
		} else if ok, wait := try(req); ok {
			out.granted = append(out.granted, req)
		} else if wait > 0 {
			return min(now+wait, deadline), true
		} else {
			return deadline, true
		}
		h.q[0] = nil
		h.q = h.q[1:]
	}
	return 0, false
}
