package sim

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom/internal/fairshare"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
)

// guardKey is the one key the model API has.
const guardKey = "api"

// guardOptions configures the quota-guard modes.
type guardOptions struct {
	// Guard configures each instance's quota.Guard; the zero value is the
	// library's defaults (a reserve of 2% of the published limit).
	Guard quota.Options
	// QueueLimit and MaxWait bound the requests an instance holds while its
	// guard says wait, as the adaptive rate limiter's queue does (0: 500
	// and 100 s). A request beyond them is rejected.
	QueueLimit int
	MaxWait    time.Duration
	// Cap, above 0, caps the rate limiter's rate in combinedMode with the
	// library's own feature: after each response the instance calls
	// adaptive.Rate.SetPublishedLimit with the limit its guard knows
	// (quota.State.PerMinute; 0 when the guard knows none, or no window),
	// and the rate core's PublishedLimitFraction is Cap. The whole budget
	// then stays at or below Cap × the published limit, shared by the
	// instances, whatever the controller proposes.
	Cap float64
	// NoHold makes the guard only read the headers (for Cap): it never
	// holds an attempt.
	NoHold bool
	// Priorities makes the limiters read each request's priority: the rate
	// limiter's queue serves by priority and sheds its lowest first, and
	// the guard holds each level in a queue of its own, keeps
	// Guard.Reserves back from the lower levels and serves the higher
	// levels first (priority.go).
	Priorities bool
}

func (o guardOptions) defaults() guardOptions {
	if o.QueueLimit == 0 {
		o.QueueLimit = queueLimit
	}
	if o.MaxWait == 0 {
		o.MaxWait = maxWait
	}
	return o
}

// quotaGuardMode is the "quota guard" mode: the model API publishes
// RateLimit-Limit, -Remaining and -Reset (draft-03, as SharePoint sends them,
// from 80% of the quota) and Retry-After, and each instance's quota.Guard
// parses them from the real header values (Observe) and holds an attempt
// while the remaining allowance less its cost is inside the reserve
// (TryAcquireAt), in a FIFO queue.
func quotaGuardMode(o guardOptions) Mode {
	o = o.defaults()
	return Mode{Name: "quota guard", headers: true,
		newLimiter: func(env limiterEnv) (limiter, error) { return newGuardLimiter(o, env) }}
}

// combinedMode is the adaptive rate limiter (configured by c) with a quota guard
// behind it, in the order the httpx layers take: the rate limiter paces the
// attempts, then the guard holds those that the published quota has no
// room for (unless o.NoHold). With o.Cap the guard's published limit also
// caps the rate (adaptive.Rate.SetPublishedLimit).
func combinedMode(name string, c adaptive.RateConfig, o guardOptions) Mode {
	o = o.defaults()
	if o.Cap > 0 {
		c.PublishedLimitFraction = o.Cap
	}
	return Mode{Name: name, headers: true,
		newLimiter: func(env limiterEnv) (limiter, error) {
			g, err := newGuardLimiter(o, env)
			if err != nil {
				return nil, fmt.Errorf("sim: mode %s: %w", name, err)
			}
			r, err := newRateLimiter(name, c, env)
			if err != nil {
				return nil, err
			}
			if o.Priorities {
				r.byID = map[uint64]*request{}
			}
			l := &rateThenGuard{pacer: r, guard: g}
			l.capped = o.Cap > 0
			return l, nil
		}}
}

// cubicQuotaMode is the "CUBIC + quota" mode, the combination the target
// search found (docs/simulator.md) and the one httpx builds by default:
// CUBIC with the library's defaults, its rate capped at 98% of the quota
// the API publishes (adaptive.Rate's SetPublishedLimit with the default
// PublishedLimitFraction, 1 − the guard's default reserve of 2%), read by
// a quota.Guard behind it that also holds the attempts the published quota
// has no room for.
func cubicQuotaMode() Mode {
	return combinedMode("CUBIC + quota", withController(adaptive.Cubic{}), guardOptions{Cap: adaptive.DefaultRateConfig().PublishedLimitFraction})
}

func newGuardLimiter(o guardOptions, env limiterEnv) (*guardLimiter, error) {
	gopts := o.Guard
	gopts.Seed = env.instanceSeed()
	g, err := quota.New(gopts)
	if err != nil {
		return nil, err
	}
	l := &guardLimiter{g: g, noHold: o.NoHold, queue: holdQueue{limit: o.QueueLimit, maxWait: o.MaxWait}}
	if o.Priorities {
		l.levels = new([fairshare.Levels]holdQueue)
		for i := range l.levels {
			l.levels[i] = l.queue
		}
		l.levels[0].limit = heldBelowTop
	}
	return l, nil
}

// guardLimiter holds requests in FIFO order until its quota.Guard admits
// them.
type guardLimiter struct {
	g      *quota.Guard
	noHold bool
	queue  holdQueue
	// levels, with priorities, holds each level's requests in place of
	// queue.
	levels *[fairshare.Levels]holdQueue
}

// admit asks the guard for req's units at now: 0 when it may go, else the
// wait it names.
func (l *guardLimiter) admit(now time.Duration, req *request) time.Duration {
	if l.noHold {
		return 0
	}
	if l.levels != nil {
		_, d := l.g.TryAcquirePriorityAt(guardKey, epoch.Add(now), req.cost, priorityOf(req))
		return d
	}
	_, d := l.g.TryAcquireAt(guardKey, epoch.Add(now), req.cost)
	return d
}

func (l *guardLimiter) acquire(now time.Duration, req *request) admit {
	if l.levels != nil {
		return l.acquireLevel(now, req)
	}
	if l.queue.empty() && l.admit(now, req) == 0 {
		return granted
	}
	return l.queue.hold(now, req)
}

func (l *guardLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	if l.levels != nil {
		return l.pollLevels(now, out)
	}
	return l.queue.release(now, out, func(req *request) (bool, time.Duration) {
		d := l.admit(now, req)
		return d == 0, d
	})
}

func (l *guardLimiter) feedback(now time.Duration, req *request, resp *response) {
	l.observe(now, req, resp, false)
}

// observe hands the guard req's response; paced says a rate limiter in
// front of the guard answers its throttles (quota.Response.Paced).
func (l *guardLimiter) observe(now time.Duration, req *request, resp *response, paced bool) {
	l.g.Observe(guardKey, quota.Response{Status: resp.Status, Header: resp.Header, Sent: epoch.Add(req.sent), Cost: req.cost, Paced: paced}, epoch.Add(now))
}

// published is the limit the guard knows at now, units a minute, and the
// window it counts over; 0 when it knows none or not its window.
func (l *guardLimiter) published(now time.Duration) (float64, time.Duration) {
	st, _ := l.g.State(guardKey, epoch.Add(now))
	perMinute := st.PerMinute(0)
	if perMinute == 0 {
		return 0, 0
	}
	return perMinute, st.Window
}

func (l *guardLimiter) setInstances(time.Duration, int) {}
func (l *guardLimiter) rate(time.Duration) float64      { return 0 }
func (l *guardLimiter) queued() int                     { return l.queue.len() + l.queuedLevels() }

// rateThenGuard is combinedMode's limiter: a request passes the rate limiter
// (the pacer), then the guard.
type rateThenGuard struct {
	pacer *rateLimiter
	guard *guardLimiter
	buf   pollOut
	// capped passes the guard's published limit to the rate core after
	// each response.
	capped bool
}

func (c *rateThenGuard) acquire(now time.Duration, req *request) admit {
	switch c.pacer.acquire(now, req) {
	case granted:
		return c.guard.acquire(now, req)
	case rejected:
		return rejected
	}
	return queued
}

func (c *rateThenGuard) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	buf := &c.buf
	buf.granted, buf.rejected = buf.granted[:0], buf.rejected[:0]
	nr, okr := c.pacer.poll(now, buf)
	out.rejected = append(out.rejected, buf.rejected...)
	for _, req := range buf.granted {
		switch c.guard.acquire(now, req) {
		case granted:
			out.granted = append(out.granted, req)
		case rejected:
			out.rejected = append(out.rejected, req)
		}
	}
	ng, okg := c.guard.poll(now, out)
	switch {
	case okr && okg:
		return min(nr, ng), true
	case okr:
		return nr, true
	}
	return ng, okg
}

// feedback reports to the guard first, then its published limit to the
// rate core, then the response to the rate core: the cap is this
// response's when the rate core hears of it.
func (c *rateThenGuard) feedback(now time.Duration, req *request, resp *response) {
	c.guard.observe(now, req, resp, true)
	if c.capped {
		perMinute, window := c.guard.published(now)
		c.pacer.setPublished(now, perMinute, window)
	}
	c.pacer.feedback(now, req, resp)
}

func (c *rateThenGuard) setInstances(now time.Duration, n int) {
	c.pacer.setInstances(now, n) // the guard has no share: it reads what the API says is left
}

func (c *rateThenGuard) rate(now time.Duration) float64 { return c.pacer.rate(now) }
func (c *rateThenGuard) queued() int                    { return c.pacer.queued() + c.guard.queued() }
