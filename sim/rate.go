package sim

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// fixedRateUnitsPerMinute is the whole-budget rate of the fixed-rate mode
// in Modes: 1,500 units a minute, the rate the seeds' fixed-rate row
// shows (1,516 = 1,500 plus the two full buckets at the start, spread over
// 15 minutes).
const fixedRateUnitsPerMinute = 1500

// fixedRateMode is the adaptive rate limiter with its minimum, maximum and
// initial rate all set to unitsPerMinute for the whole budget, so that the
// rate cannot change, and a bucket of 10 s of it. It still queues, and
// still pauses on Retry-After.
func fixedRateMode(unitsPerMinute float64) Mode {
	c := adaptive.DefaultRateConfig()
	c.MinUnitsPerMinute, c.MaxUnitsPerMinute, c.InitialUnitsPerMinute = unitsPerMinute, unitsPerMinute, unitsPerMinute
	c.BurstTime = headroom.Duration(10 * time.Second)
	return rateMode("fixed rate", c)
}

// aimdMode is the adaptive rate limiter with the library's defaults and
// the AIMD controller a (its zero value: the seed's defaults).
func aimdMode(a adaptive.AIMD) Mode { return rateMode("AIMD", withController(a)) }

// cubicMode is the adaptive rate limiter with the library's defaults and
// the CUBIC controller k (its zero value: the seed's defaults).
func cubicMode(k adaptive.Cubic) Mode { return rateMode("CUBIC", withController(k)) }

// withController is the library's default rate configuration with the
// controller c.
func withController(c adaptive.RateController) adaptive.RateConfig {
	cfg := adaptive.DefaultRateConfig()
	cfg.RateController = c
	return cfg
}

// rateMode is the adaptive rate limiter's core (adaptive.Rate) configured by
// c, one per instance, each told the instance count. c.Instances is
// ignored.
func rateMode(name string, c adaptive.RateConfig) Mode {
	return Mode{Name: name, newLimiter: func(env limiterEnv) (limiter, error) {
		r, err := newRateLimiter(name, c, env)
		if err != nil {
			return nil, err // not a nil *rateLimiter in a non-nil limiter
		}
		return r, nil
	}}
}

// newRateLimiter builds the adaptive.Rate of one instance of mode name.
func newRateLimiter(name string, c adaptive.RateConfig, env limiterEnv) (*rateLimiter, error) {
	c.Instances = env.instances
	c.Seed = env.instanceSeed()
	r, err := adaptive.NewRate(c, env.now)
	if err != nil {
		return nil, fmt.Errorf("sim: mode %s: %w", name, err)
	}
	return &rateLimiter{core: r, trace: env.trace, inst: env.inst}, nil
}

// rateLimiter drives an adaptive.Rate. Its queue of requests mirrors the
// core's FIFO queue one to one.
type rateLimiter struct {
	core  *adaptive.Rate
	q     []*request
	ids   []uint64
	trace func(traceEvent)
	inst  int
	// byID, with priorities, holds the queued requests in place of q and
	// ids, and shed the requests shed for higher ones, until poll reports
	// them (priority.go).
	byID map[uint64]*request
	shed []*request
}

func (l *rateLimiter) acquire(now time.Duration, req *request) admit {
	if ok, _ := l.tryAcquire(now, req); ok {
		l.record(now, traceAcquire, req.cost, 0, 0)
		return granted
	}
	if l.byID != nil {
		return l.enqueueLevel(now, req)
	}
	if len(l.q) >= queueLimit {
		l.record(now, traceQueueFull, req.cost, 0, 0)
		return rejected
	}
	id, _, ok := l.core.Enqueue(now, req.cost)
	l.record(now, traceEnqueue, req.cost, 0, 0)
	if !ok {
		return rejected
	}
	l.q = append(l.q, req)
	l.ids = append(l.ids, id)
	return queued
}

func (l *rateLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	for {
		w, ok := l.core.Dequeue(now)
		if !ok {
			break
		}
		l.record(now, traceDequeue, w.Cost, 0, 0)
		if l.byID != nil {
			l.dequeued(w, out)
			continue
		}
		if len(l.q) == 0 || l.ids[0] != w.ID {
			panic("sim: the adaptive.Rate queue left its FIFO order")
		}
		req := l.q[0]
		l.q[0] = nil
		l.q, l.ids = l.q[1:], l.ids[1:]
		if w.Granted {
			out.granted = append(out.granted, req)
		} else {
			out.rejected = append(out.rejected, req)
		}
	}
	out.rejected = append(out.rejected, l.shed...)
	clear(l.shed)
	l.shed = l.shed[:0]
	return l.core.Next(now)
}

func (l *rateLimiter) feedback(now time.Duration, req *request, resp *response) {
	if resp.Status == 200 {
		l.core.Release(now, req.sent, req.cost, adaptive.Success, 0)
		l.record(now, traceSuccess, req.cost, req.sent, 0)
	} else {
		l.core.Release(now, req.sent, req.cost, adaptive.Throttled, resp.RetryAfter)
		l.record(now, traceThrottled, req.cost, req.sent, resp.RetryAfter)
	}
}

func (l *rateLimiter) setInstances(now time.Duration, n int) {
	l.core.SetInstances(now, n)
	l.record(now, traceInstances, n, 0, 0)
}

// setPublished passes the published limit (whole budget, units a minute; 0
// for none) and its window to the core; a call that changes nothing is not
// traced.
func (l *rateLimiter) setPublished(now time.Duration, perMinute float64, window time.Duration) {
	if l.core.SetPublishedLimit(now, perMinute, window) != 0 && l.trace != nil {
		l.trace(traceEvent{Instance: l.inst, At: now, Kind: tracePublished, Limit: perMinute, Window: window, Rate: l.core.Rate()})
	}
}

func (l *rateLimiter) rate(time.Duration) float64 { return l.core.Rate() }
func (l *rateLimiter) queued() int                { return l.core.Len() }

func (l *rateLimiter) record(now time.Duration, kind traceKind, n int, sent, retryAfter time.Duration) {
	if l.trace != nil {
		l.trace(traceEvent{Instance: l.inst, At: now, Kind: kind, N: n, Sent: sent, RetryAfter: retryAfter, Rate: l.core.Rate()})
	}
}

// tryAcquire is the rate core's TryAcquire, with req's level when the
// mode reads priorities.
func (l *rateLimiter) tryAcquire(now time.Duration, req *request) (bool, time.Duration) {
	if l.byID != nil {
		return l.core.TryAcquireLevel(now, req.cost, req.level)
	}
	return l.core.TryAcquire(now, req.cost)
}
