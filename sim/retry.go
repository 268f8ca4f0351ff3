package sim

import "time"

// retryWait is what the retry handler does after req was refused at now:
// the mode's own handler when it has one, else the simulator's, which
// tries Config.Attempts times in all after retryDelay.
func (r *runner) retryWait(req *request, now time.Duration) (time.Duration, bool) {
	if r.mode.retry != nil {
		return r.mode.retry(req.attempt, &req.resp, now)
	}
	if req.attempt >= r.cfg.Attempts {
		return 0, false
	}
	return retryDelay(&req.resp, req.attempt+1), true
}
