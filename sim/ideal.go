package sim

import "time"

// idealMode is the "ideal" mode: a client that knows the server — its kind,
// window, burst and the quota schedule (Config.Server and the scenario) —
// but not the latency of a request before it has sent it: only that each
// leg takes from Latency.Min to Latency.Max (Config.Latency). It sends a
// request only when every arrival those bounds allow would be accepted,
// and learns from each response that its request arrived no later than a
// leg before. Its instances share one view of the server, as instances
// sharing their state would: what one sends and learns, the others know,
// so a quota drop or a new instance cannot catch one of them with the
// others' units. It honours Retry-After as the recommended mode does. It
// is the yardstick of what could be had at all without a 429:
// docs/simulator.md derives what it reaches against each kind.
func idealMode() Mode {
	return Mode{Name: "ideal", newLimiter: newIdealLimiter}
}

// A shadow is the ideal client's model of the server. Every method takes
// the virtual time.
type shadow interface {
	// try admits a request of units sent at now when every arrival the
	// latency bounds allow would be accepted, and records it (ok). If not,
	// next is the first instant from which it may, as far as the shadow
	// knows now (a response can make it sooner).
	try(now time.Duration, units int) (h handle, ok bool, next time.Duration)
	// settle tells the shadow that the request h arrived at hi at the
	// latest.
	settle(h handle, hi time.Duration)
	// largest is the most units one request can have and still be sent.
	largest() int
}

// handle is what a shadow keeps of one request it admitted.
type handle any

// idealKey is the key of the run's shadow in limiterEnv.shared.
type idealKey struct{}

// versioned counts what changes the shadow's answers: a request admitted
// or narrowed. Until it changes, a refusal's next instant stands, and the
// instances ask again only then.
type versioned struct {
	shadow
	version uint64
}

func (v *versioned) try(now time.Duration, units int) (handle, bool, time.Duration) {
	h, ok, next := v.shadow.try(now, units)
	if ok {
		v.version++
	}
	return h, ok, next
}

func (v *versioned) settle(h handle, hi time.Duration) {
	v.shadow.settle(h, hi)
	v.version++
}

// refusal is the shadow's last refusal of an instance's head request.
type refusal struct {
	req     *request
	version uint64
	next    time.Duration
}

// idealLimiter queues an instance's requests, FIFO and bounded as the
// adaptive rate limiter's queue is, and sends the head as soon as the
// run's shadow admits it.
type idealLimiter struct {
	sh      *versioned
	refused refusal
	queue   holdQueue
	lat     Latency
	pending map[*request]handle
	// paused is when the last Retry-After ends: nothing is sent before.
	paused    time.Duration
	schedule  []quotaStep
	window    time.Duration
	instances int
}

func newIdealLimiter(env limiterEnv) (limiter, error) {
	cfg := env.cfg
	sh, ok := env.shared[idealKey{}].(*versioned)
	if !ok {
		sh = &versioned{shadow: newShadow(idealWorld{server: cfg.Server, schedule: cfg.schedule(), lat: cfg.Latency})}
		env.shared[idealKey{}] = sh
	}
	return &idealLimiter{sh: sh, queue: holdQueue{limit: queueLimit, maxWait: maxWait}, lat: cfg.Latency,
		pending: map[*request]handle{}, schedule: cfg.schedule(), window: cfg.Server.Window, instances: env.instances}, nil
}

// idealWorld is what the ideal client knows.
type idealWorld struct {
	server   Server
	schedule []quotaStep
	lat      Latency
}

// jitter is how much the two legs of a round trip can differ from one
// request to the next: what the client cannot know before it sends.
func (w idealWorld) jitter() time.Duration { return w.lat.Max - w.lat.Min }

// minQuota is the smallest quota the schedule puts in force during
// [from, to].
func minQuota(schedule []quotaStep, from, to time.Duration) int {
	q := quotaAt(schedule, from)
	for _, s := range schedule {
		if s.At > from && s.At <= to {
			q = min(q, s.Units)
		}
	}
	return q
}

// maxQuota is the largest quota of the schedule.
func maxQuota(schedule []quotaStep) int {
	q := 0
	for _, s := range schedule {
		q = max(q, s.Units)
	}
	return q
}

// nextStep is the first step of the schedule after t, or false.
func nextStep(schedule []quotaStep, t time.Duration) (time.Duration, bool) {
	for _, s := range schedule {
		if s.At > t {
			return s.At, true
		}
	}
	return 0, false
}

func newShadow(w idealWorld) shadow {
	switch w.server.Kind {
	case kindFixedWindow:
		if w.server.Aligned {
			return newAlignedShadow(w)
		}
		return newCycleShadow(w)
	case kindSlidingCounter:
		return newCounterShadow(w)
	case kindTokenBucket, kindLeakyBucket:
		return newBucketShadow(w)
	}
	return newLogShadow(w)
}

func (l *idealLimiter) admit(now time.Duration, req *request) (bool, time.Duration) {
	if now < l.paused {
		return false, l.paused - now
	}
	if r := l.refused; r.req == req && r.version == l.sh.version && now < r.next {
		return false, r.next - now
	}
	h, ok, next := l.sh.try(now, req.cost)
	if ok {
		l.pending[req] = h
		return true, 0
	}
	next = max(next, now+1)
	l.refused = refusal{req: req, version: l.sh.version, next: next}
	return false, next - now
}

func (l *idealLimiter) acquire(now time.Duration, req *request) admit {
	if req.cost > l.sh.largest() {
		return rejected // the server never takes it
	}
	if l.queue.empty() {
		if ok, _ := l.admit(now, req); ok {
			return granted
		}
	}
	return l.queue.hold(now, req)
}

func (l *idealLimiter) poll(now time.Duration, out *pollOut) (time.Duration, bool) {
	return l.queue.release(now, out, func(req *request) (bool, time.Duration) { return l.admit(now, req) })
}

func (l *idealLimiter) feedback(now time.Duration, req *request, resp *response) {
	if h, ok := l.pending[req]; ok {
		delete(l.pending, req)
		// The answer left the server at the arrival or later, and took a
		// leg of Latency.Min at least.
		l.sh.settle(h, now-l.lat.Min)
	}
	if resp.Status != 200 && resp.RetryAfter > 0 {
		l.paused = max(l.paused, now+resp.RetryAfter)
	}
}

func (l *idealLimiter) setInstances(_ time.Duration, n int) { l.instances = n }

// rate is the instance's share of the quota in force, units a minute.
func (l *idealLimiter) rate(now time.Duration) float64 {
	return float64(quotaAt(l.schedule, now)) * float64(time.Minute) / float64(l.window) / float64(l.instances)
}

func (l *idealLimiter) queued() int { return l.queue.len() }
