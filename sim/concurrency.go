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
		return &concurrencyLimiter{core: core, queue: holdQueue{limit: queueLimit, maxWait: maxWait}}, nil
	}}
}

type concurrencyLimiter struct {
	core  *adaptive.Concurrency
	queue holdQueue
}

func (l *concurrencyLimiter) acquire(now time.Duration, req *request) admit {
	if l.queue.empty() && l.take(now) {
		return granted
	}
	l.core.Blocked()
	return l.queue.hold(now, req)
}

func (l *concurrencyLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	// A slot frees only when a response comes back (feedback), so a waiter
	// names no wait of its own.
	return l.queue.release(now, out, func(*request) (bool, time.Duration) { return l.take(now), 0 })
}

// take asks the core for one slot.
func (l *concurrencyLimiter) take(now time.Duration) bool {
	ok, _ := l.core.TryAcquire(now, 1)
	return ok
}

func (l *concurrencyLimiter) feedback(now time.Duration, req *request, resp *response) {
	o := adaptive.Dropped // a throttle is a dropped call, the queueing signal
	if resp.Status == 200 {
		o = adaptive.Success
	}
	l.core.Release(now, now-req.sent, 1, o)
}

func (l *concurrencyLimiter) setInstances(time.Duration, int) {}
func (l *concurrencyLimiter) rate(time.Duration) float64      { return 0 }
func (l *concurrencyLimiter) queued() int                     { return l.queue.len() }
