package sim

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// FixedRateUnitsPerMinute is the whole-budget rate of the FixedRate mode in
// DefaultModes: 1,500 units a minute, the rate the seeds' fixed-rate row
// shows (1,516 = 1,500 plus the two full buckets at the start, spread over
// 15 minutes).
const FixedRateUnitsPerMinute = 1500

// FixedRate is the adaptive rate limiter with its minimum, maximum and
// initial rate all set to unitsPerMinute for the whole budget, so that the
// rate cannot change, and a bucket of 10 s of it. It still
// queues, and still pauses on Retry-After.
func FixedRate(unitsPerMinute float64) Mode {
	c := adaptive.DefaultRateConfig()
	c.MinUnitsPerMinute, c.MaxUnitsPerMinute, c.InitialUnitsPerMinute = unitsPerMinute, unitsPerMinute, unitsPerMinute
	c.Burst = 10 * time.Second
	return RateMode("fixed rate", c)
}

// AIMD is the adaptive rate limiter with the library's defaults and the
// AIMD controller a (its zero value: the seed's defaults).
func AIMD(a adaptive.AIMD) Mode {
	c := adaptive.DefaultRateConfig()
	c.Controller = a
	return RateMode("AIMD", c)
}

// CUBIC is the adaptive rate limiter with the library's defaults and the
// CUBIC controller k (its zero value: the seed's defaults).
func CUBIC(k adaptive.Cubic) Mode {
	c := adaptive.DefaultRateConfig()
	c.Controller = k
	return RateMode("CUBIC", c)
}

// RateMode is the adaptive rate limiter's core (adaptive.Rate) configured by
// c, one per instance, each told the instance count. c.Instances is
// ignored.
func RateMode(name string, c adaptive.RateConfig) Mode {
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
	trace func(TraceEvent)
	inst  int
}

func (l *rateLimiter) acquire(now time.Duration, req *request) admit {
	if ok, _ := l.core.TryAcquire(now, req.cost); ok {
		l.record(now, TraceAcquire, req.cost, 0, 0)
		return granted
	}
	id, _, why := l.core.Enqueue(now, req.cost, adaptive.NoDeadline)
	l.record(now, TraceEnqueue, req.cost, 0, 0)
	if why != adaptive.NotRefused {
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
		l.record(now, TraceDequeue, w.Cost, 0, 0)
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
	return l.core.Next(now)
}

func (l *rateLimiter) feedback(now time.Duration, req *request, resp *Response) {
	if resp.Status == 200 {
		l.core.OnSuccess(now, req.sent, req.cost)
		l.record(now, TraceSuccess, req.cost, req.sent, 0)
	} else {
		l.core.OnThrottled(now, req.sent, req.cost, resp.RetryAfter)
		l.record(now, TraceThrottled, req.cost, req.sent, resp.RetryAfter)
	}
}

func (l *rateLimiter) setInstances(now time.Duration, n int) {
	l.core.SetInstances(now, n)
	l.record(now, TraceInstances, n, 0, 0)
}

// setPublished passes the published limit (whole budget, units a minute; 0
// for none) and its window to the core; a call that changes nothing is not
// traced.
func (l *rateLimiter) setPublished(now time.Duration, perMinute float64, window time.Duration) {
	if l.core.SetPublishedLimit(now, perMinute, window) != 0 && l.trace != nil {
		l.trace(TraceEvent{Instance: l.inst, At: now, Kind: TracePublished, Limit: perMinute, Window: window, Rate: l.core.Rate()})
	}
}

func (l *rateLimiter) rate(time.Duration) float64 { return l.core.Rate() }
func (l *rateLimiter) queued() int                { return l.core.Len() }

func (l *rateLimiter) record(now time.Duration, kind TraceKind, n int, sent, retryAfter time.Duration) {
	if l.trace != nil {
		l.trace(TraceEvent{Instance: l.inst, At: now, Kind: kind, N: n, Sent: sent, RetryAfter: retryAfter, Rate: l.core.Rate()})
	}
}

// TraceKind names a call the simulator made on an engine core.
type TraceKind uint8

// The calls.
const (
	TraceAcquire   TraceKind = iota // Acquire that admitted
	TraceEnqueue                    // Acquire that did not, then Enqueue
	TraceDequeue                    // a Dequeue that returned a waiter
	TraceSuccess                    // OnSuccess
	TraceThrottled                  // OnThrottled
	TraceInstances                  // SetInstances
	TracePublished                  // SetPublishedLimit that changed the cap
)

// TraceEvent is one call the simulator made on an instance's engine core,
// with the core's rate after it: the record that lets a test replay the same
// calls on a fresh core and compare: the simulator holds no model of its own.
type TraceEvent struct {
	Instance   int
	At         time.Duration
	Kind       TraceKind
	N          int // cost, or the instance count for TraceInstances
	Sent       time.Duration
	RetryAfter time.Duration
	Limit      float64       // the published limit of TracePublished, units a minute
	Window     time.Duration // the window of that limit
	Rate       float64       // the core's rate after the call, units a minute
}
