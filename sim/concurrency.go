package sim

import (
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// AdaptiveConcurrency is the latency-adaptive concurrency limit's engine
// (adaptive.Concurrency, seed 002) configured by c: each instance may have
// its limit of requests in flight, learnt from their latency; a 429 is a
// dropped call, the engine's queueing signal. Requests that do not fit wait
// in a FIFO queue bounded as the adaptive rate limiter's is (500 requests,
// 100 s). It counts requests, not units: it bounds what is in flight, not
// the rate.
func AdaptiveConcurrency(c adaptive.ConcurrencyConfig) Mode {
	return Mode{Name: "adaptive concurrency", newLimiter: func(env limiterEnv) (limiter, error) {
		return &concurrencyLimiter{core: adaptive.NewConcurrency(c)}, nil
	}}
}

type concurrencyLimiter struct {
	core *adaptive.Concurrency
	q    []*request
}

func (l *concurrencyLimiter) acquire(now time.Duration, req *request) admit {
	if len(l.q) == 0 && l.core.TryAcquire(1) {
		return granted
	}
	l.core.Blocked()
	if len(l.q) >= adaptive.DefaultQueueLimit {
		return rejected
	}
	req.held = now
	l.q = append(l.q, req)
	return queued
}

func (l *concurrencyLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	for len(l.q) > 0 {
		h := l.q[0]
		switch {
		case now-h.held >= adaptive.DefaultMaxWait:
			out.rejected = append(out.rejected, h)
		case l.core.TryAcquire(1):
			out.granted = append(out.granted, h)
		default:
			return h.held + adaptive.DefaultMaxWait, true
		}
		l.q[0] = nil
		l.q = l.q[1:]
	}
	return 0, false
}

func (l *concurrencyLimiter) feedback(now time.Duration, req *request, resp *Response) {
	if resp.Status == 200 {
		l.core.Release(now, now-req.sent, 1)
	} else {
		l.core.ReleaseDropped(now, now-req.sent, 1)
	}
}

func (l *concurrencyLimiter) setInstances(time.Duration, int) {}
func (l *concurrencyLimiter) rate(time.Duration) float64      { return 0 }
func (l *concurrencyLimiter) queued() int                     { return len(l.q) }
