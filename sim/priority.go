package sim

import (
	"time"

	"github.com/headroom-go/headroom/internal/fairshare"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
)

// priorityReserve is what the priorities mode's guards keep back from
// background work while critical work asks: a fifth of the published
// limit, the share a person's requests may want within one window at the
// mixed scenario's demand (a fifth of three quotas is 60 % of one quota a
// minute; a window's worth at that pace outruns the reserve, and the
// critical requests then spend it as they come).
const priorityReserve = 0.2

// priorityRateReserve is the share of the rate limiter's rate kept from
// background work while critical work asks: a little under the mixed
// scenario's critical share (60 % of the quota), since the rate limiter's
// queue serves critical requests first and the reserve need not hold all
// of it; background work then fills what critical work leaves of the
// capped rate (a reserve of 60 % used 97.4 % of the quota, 55 % 97.6 %,
// with critical requests' p95 wait at 0.2 s and 0.5 s over 20 seeds).
const priorityRateReserve = 0.55

// heldBelowTop bounds the background requests each instance's guard holds
// in the priorities mode, a tenth of the queue's 500. They wait for the
// reset together and go together when it comes, every instance's at once,
// each instance counting the allowance as if its own: a full queue of 500
// an instance would spend what the reset gives twice over and draw a
// storm of 429s, whose pauses hold the critical requests too. Background
// requests beyond it wait in the rate limiter's queue, or are refused.
const heldBelowTop = queueLimit / 10

// cubicQuotaPrioritiesMode is "CUBIC + quota" reading each request's
// priority: the rate limiter's queue serves critical requests first (first
// come first served within a level, with the share that bounds the
// background's wait) and sheds background requests first when it is full,
// and the guard keeps a fifth of the quota back from background requests
// while critical ones ask, holding each level in a queue of its own.
func cubicQuotaPrioritiesMode() Mode {
	o := guardOptions{Cap: adaptive.DefaultRateConfig().PublishedLimitFraction, Priorities: true}
	o.Guard.Reserves = quota.Reserves{Default: priorityReserve, Background: priorityReserve}
	c := withController(adaptive.Cubic{})
	c.BackgroundReserve = priorityRateReserve
	return combinedMode("CUBIC + quota + priorities", c, o)
}

// priorityOf is req's priority as the library names it.
func priorityOf(req *request) limit.Priority { return limit.Priority(req.level - 1) }

// enqueueLevel queues req at its level's place in the rate core's queue,
// first shedding the latest request of the lowest level below req's when
// the queue holds queueLimit requests; it rejects req when there is none.
func (l *rateLimiter) enqueueLevel(now time.Duration, req *request) admit {
	if len(l.byID) >= queueLimit {
		var victim uint64
		for id, q := range l.byID {
			if v := l.byID[victim]; q.level < req.level && (v == nil || q.level < v.level || q.level == v.level && id > victim) {
				victim = id
			}
		}
		if victim == 0 {
			l.record(now, traceQueueFull, req.cost, 0, 0)
			return rejected
		}
		l.core.Cancel(now, victim)
		l.shed = append(l.shed, l.byID[victim])
		delete(l.byID, victim)
	}
	id, _, ok := l.core.EnqueueLevel(now, req.cost, req.level)
	l.record(now, traceEnqueue, req.cost, 0, 0)
	if !ok {
		return rejected
	}
	l.byID[id] = req
	return queued
}

// dequeued hands on the request w was.
func (l *rateLimiter) dequeued(w adaptive.Waiter, out *pollOut) {
	req := l.byID[w.ID]
	delete(l.byID, w.ID)
	if w.Granted {
		out.granted = append(out.granted, req)
	} else {
		out.rejected = append(out.rejected, req)
	}
}

// acquireLevel is acquire with priorities: req goes at once when nobody of
// its level or above is held and the guard admits it, else it is held in
// its level's queue.
func (l *guardLimiter) acquireLevel(now time.Duration, req *request) admit {
	free := true
	for level := req.level; level < fairshare.Levels; level++ {
		free = free && l.levels[level].empty()
	}
	if free && l.admit(now, req) == 0 {
		return granted
	}
	return l.levels[req.level].hold(now, req)
}

// pollLevels releases the held requests the guard admits, the highest
// level first, each level in its order; a level that must wait holds back
// no other.
func (l *guardLimiter) pollLevels(now time.Duration, out *pollOut) (next time.Duration, ok bool) {
	for level := fairshare.Levels - 1; level >= 0; level-- {
		n, more := l.levels[level].release(now, out, func(req *request) (bool, time.Duration) {
			d := l.admit(now, req)
			return d == 0, d
		})
		if more && (!ok || n < next) {
			next, ok = n, true
		}
	}
	return next, ok
}

// queuedLevels is the number of requests held in the level queues.
func (l *guardLimiter) queuedLevels() int {
	n := 0
	if l.levels != nil {
		for i := range l.levels {
			n += l.levels[i].len()
		}
	}
	return n
}
