package sim

import (
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// concurrencyMode is the latency-adaptive concurrency limit's engine
// (adaptive.Concurrency) configured by c: each instance may have
// its limit of requests in flight, learnt from their latency; a 429 is a
// dropped call, the engine's queueing signal. Requests that do not fit wait
// in a FIFO queue bounded as the adaptive rate limiter's is (500 requests,
// 100 s). It counts requests, not units: it bounds what is in flight, not
// the rate.
func concurrencyMode(c adaptive.ConcurrencyConfig) Mode {
	return Mode{Name: "adaptive concurrency", newLimiter: func(env limiterEnv) (limiter, error) {
		core, err := adaptive.NewConcurrency(c)
		if err != nil {
			return nil, err
		}
		rc := adaptive.DefaultRateConfig()
		return &concurrencyLimiter{core: core, queue: holdQueue{limit: rc.QueueLimit, maxWait: rc.MaxWait}}, nil
	}}
}

type concurrencyLimiter struct {
	core  *adaptive.Concurrency
	queue holdQueue
}

func (l *concurrencyLimiter) acquire(now time.Duration, req *request) admit {
	if l.queue.empty() && l.core.TryAcquire(1) {
		return granted
	}
	l.core.Blocked()
	return l.queue.hold(now, req)
}

func (l *concurrencyLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	// A slot frees only when a response comes back (feedback), so a waiter
	// names no wait of its own.
	return l.queue.release(now, out, func(*request) (bool, time.Duration) { return l.core.TryAcquire(1), 0 })
}

func (l *concurrencyLimiter) feedback(now time.Duration, req *request, resp *response) {
	if resp.Status == 200 {
		l.core.Release(now, now-req.sent, 1)
	} else {
		l.core.ReleaseDropped(now, now-req.sent, 1)
	}
}

func (l *concurrencyLimiter) setInstances(time.Duration, int) {}
func (l *concurrencyLimiter) rate(time.Duration) float64      { return 0 }
func (l *concurrencyLimiter) queued() int                     { return l.queue.len() }
