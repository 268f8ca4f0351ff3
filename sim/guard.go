package sim

import (
	"fmt"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
)

// epoch is the wall-clock time of virtual time 0, for the engines that read
// time.Time (the quota guard parses headers against it).
var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// guardKey is the one key the model API has.
const guardKey = "api"

// GuardOptions configures the quota-guard modes.
type GuardOptions struct {
	// Guard configures each instance's quota.Guard; the zero value is the
	// library's defaults (a reserve of 2% of the published limit).
	Guard quota.Options
	// QueueLimit and MaxWait bound the requests an instance holds while its
	// guard says wait, as the adaptive rate limiter's queue does (0: 500
	// and 100 s). A request beyond them is rejected.
	QueueLimit int
	MaxWait    time.Duration
	// PerRequest asks the guard for one unit per request (quota.Guard.Admit)
	// instead of the request's cost (AdmitN, the default), as a client that
	// does not know its costs would.
	PerRequest bool
	// ResetWhenEmpty makes the API publish, as RateLimit-Reset, when its
	// window will be empty rather than when its oldest unit leaves.
	ResetWhenEmpty bool
	// GuardFirst puts the guard before the rate limiter in Combined: the
	// guard's holds release into the rate limiter's queue, which paces them.
	GuardFirst bool
	// Signal makes a hold of the guard a throttle for the rate limiter in
	// Combined: when the guard starts to hold an attempt that the rate
	// limiter let through, the simulator reports it on the rate core as
	// OnThrottled with the guard's wait as the Retry-After, as a lease
	// released with Throttle(wait) would. The rate then finds the quota
	// from the published figures, before the server answers 429.
	Signal bool
	// SignalNoPause reports the hold without its wait, so the rate is cut
	// but the bucket does not pause.
	SignalNoPause bool
	// Cap, above 0, caps the rate limiter's rate in Combined with the
	// library's own feature: after each response the instance calls
	// adaptive.Rate.SetPublishedLimit with the limit its guard knows
	// (quota.State.PerMinute over CapWindow; 0 when the guard knows none),
	// and the rate core's PublishedLimitFraction is Cap. The whole budget
	// then stays at or below Cap × the published limit, shared by the
	// instances, whatever the controller proposes.
	Cap float64
	// CapWindow is the window of the published limit when the headers do
	// not say (the draft-03 headers do not); default 60 s, SharePoint's.
	CapWindow time.Duration
	// NoHold makes the guard only read the headers (for Cap): it never
	// holds an attempt.
	NoHold bool
}

func (o GuardOptions) defaults() GuardOptions {
	if o.QueueLimit == 0 {
		o.QueueLimit = adaptive.DefaultQueueLimit
	}
	if o.MaxWait == 0 {
		o.MaxWait = adaptive.DefaultMaxWait
	}
	if o.CapWindow == 0 {
		o.CapWindow = time.Minute
	}
	return o
}

// QuotaGuard is the "quota guard" mode: the model API publishes
// RateLimit-Limit, -Remaining and -Reset (draft-03, as SharePoint sends them,
// from 80% of the quota) and Retry-After, and each instance's quota.Guard
// parses them from the real header values (Observe) and holds an attempt
// while the remaining allowance is inside its reserve (Admit), in a FIFO
// queue.
func QuotaGuard(o GuardOptions) Mode {
	o = o.defaults()
	return Mode{Name: "quota guard", Headers: true, ResetWhenEmpty: o.ResetWhenEmpty,
		newLimiter: func(env limiterEnv) (limiter, error) { return newGuardLimiter(o) }}
}

// Combined is the adaptive rate limiter (configured by c) with a quota guard
// behind it, in the order the httpx layers take: the rate limiter paces the
// attempts, then the guard holds those that the published quota has no
// room for. With o.Cap the guard's published limit also caps the rate
// (adaptive.Rate.SetPublishedLimit).
func Combined(name string, c adaptive.RateConfig, o GuardOptions) Mode {
	o = o.defaults()
	return Mode{Name: name, Headers: true, ResetWhenEmpty: o.ResetWhenEmpty,
		newLimiter: func(env limiterEnv) (limiter, error) {
			b, err := newGuardLimiter(o)
			if err != nil {
				return nil, fmt.Errorf("sim: mode %s: %w", name, err)
			}
			cc := c
			if o.Cap > 0 {
				cc.PublishedLimitFraction = o.Cap
			}
			a, err := RateMode(name, cc).newLimiter(env)
			if err != nil {
				return nil, err
			}
			rl, _ := a.(*rateLimiter)
			var published func(now time.Duration)
			if o.Cap > 0 && rl != nil {
				published = func(now time.Duration) {
					st, _ := b.g.State(guardKey, epoch.Add(now))
					rl.setPublished(now, st.PerMinute(o.CapWindow))
				}
			}
			if o.GuardFirst {
				return &chain{a: b, b: a, published: published}, nil
			}
			if rl != nil && o.Signal {
				b.onHold = func(now time.Duration, req *request, wait time.Duration) {
					if o.SignalNoPause {
						wait = 0
					}
					rl.core.OnThrottled(now, now, req.cost, wait)
					rl.record(now, TraceThrottled, req.cost, now, wait)
				}
			}
			return &chain{a: a, b: b, published: published}, nil
		}}
}

// CubicQuota is the "CUBIC + quota" mode, the combination the target search
// found (docs/simulator.md): CUBIC with the library's defaults, its rate
// capped at 98% of the quota the API publishes (adaptive.Rate's
// SetPublishedLimit with the default PublishedLimitFraction, 1 − the
// guard's default reserve of 2%), read by a quota.Guard that only parses
// the headers and never holds an attempt.
func CubicQuota() Mode {
	return Combined("CUBIC + quota", withController(adaptive.Cubic{}), GuardOptions{Cap: adaptive.DefaultPublishedLimitFraction, NoHold: true})
}

func newGuardLimiter(o GuardOptions) (*guardLimiter, error) {
	g, err := quota.New(o.Guard)
	if err != nil {
		return nil, err
	}
	return &guardLimiter{g: g, o: o}, nil
}

// guardLimiter holds requests in FIFO order until its quota.Guard admits
// them.
type guardLimiter struct {
	g      *quota.Guard
	o      GuardOptions
	q      []*request
	onHold func(now time.Duration, req *request, wait time.Duration)
}

// admit asks the guard for req's units at now: 0 when it may go.
func (l *guardLimiter) admit(now time.Duration, req *request) time.Duration {
	if l.o.NoHold {
		return 0
	}
	cost := int64(req.cost)
	if l.o.PerRequest {
		cost = 1
	}
	return l.g.AdmitN(guardKey, epoch.Add(now), cost)
}

func (l *guardLimiter) acquire(now time.Duration, req *request) admit {
	var d time.Duration
	if len(l.q) == 0 {
		if d = l.admit(now, req); d == 0 {
			return granted
		}
	}
	if len(l.q) >= l.o.QueueLimit {
		return rejected
	}
	if l.onHold != nil && d > 0 {
		l.onHold(now, req, d)
	}
	req.held = now
	l.q = append(l.q, req)
	return queued
}

func (l *guardLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	for len(l.q) > 0 {
		h := l.q[0]
		deadline := h.held + l.o.MaxWait
		if now >= deadline {
			out.rejected = append(out.rejected, h)
			l.q = l.q[1:]
			continue
		}
		if d := l.admit(now, h); d > 0 {
			return min(now+d, deadline), true
		}
		out.granted = append(out.granted, h)
		l.q[0] = nil
		l.q = l.q[1:]
	}
	return 0, false
}

func (l *guardLimiter) feedback(now time.Duration, req *request, resp *Response) {
	l.g.Observe(guardKey, resp.Status, resp.Header, epoch.Add(now))
}

func (l *guardLimiter) setInstances(time.Duration, int) {}
func (l *guardLimiter) rate(time.Duration) float64      { return 0 }
func (l *guardLimiter) queued() int                     { return len(l.q) }

// chain passes a request through limiter a, then limiter b.
type chain struct {
	a, b limiter
	buf  pollOut
	// published, when set, passes the guard's published limit to the rate
	// core after the guard has read a response.
	published func(now time.Duration)
}

func (c *chain) acquire(now time.Duration, req *request) admit {
	switch c.a.acquire(now, req) {
	case granted:
		return c.b.acquire(now, req)
	case rejected:
		return rejected
	}
	return queued
}

func (c *chain) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	buf := &c.buf
	buf.granted, buf.rejected = buf.granted[:0], buf.rejected[:0]
	na, oka := c.a.poll(now, buf)
	out.rejected = append(out.rejected, buf.rejected...)
	for _, req := range buf.granted {
		switch c.b.acquire(now, req) {
		case granted:
			out.granted = append(out.granted, req)
		case rejected:
			out.rejected = append(out.rejected, req)
		}
	}
	nb, okb := c.b.poll(now, out)
	switch {
	case oka && okb:
		return min(na, nb), true
	case oka:
		return na, true
	}
	return nb, okb
}

// feedback reports to the guard first, then its published limit to the
// rate core, then the response to the rate core: the cap is this
// response's when the rate core hears of it.
func (c *chain) feedback(now time.Duration, req *request, resp *Response) {
	first, second := c.a, c.b
	if _, ok := second.(*guardLimiter); ok {
		first, second = second, first
	}
	first.feedback(now, req, resp)
	if c.published != nil {
		c.published(now)
	}
	second.feedback(now, req, resp)
}

func (c *chain) setInstances(now time.Duration, n int) {
	c.a.setInstances(now, n)
	c.b.setInstances(now, n)
}

func (c *chain) rate(now time.Duration) float64 { return c.a.rate(now) + c.b.rate(now) }
func (c *chain) queued() int                    { return c.a.queued() + c.b.queued() }
