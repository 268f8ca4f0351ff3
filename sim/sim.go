package sim

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/headroom-go/headroom/internal/fairshare"
)

// request is one call of a client, across its attempts.
type request struct {
	id      int
	inst    int
	cost    int
	level   int           // its priority: fairshare's level (1, the default, outside the mixed scenario)
	attempt int           // 1 for the first try
	asked   time.Duration // when this attempt asked its limiter
	sent    time.Duration // when this attempt was sent
	held    time.Duration // when a guard started to hold this attempt
	resp    response      // the API's answer to the attempt in flight
}

// instance is one process: its limiter and its demand.
type instance struct {
	id     int
	lim    limiter
	rng    *rand.Rand // the demand: arrival times and costs
	wakeAt time.Duration
	active bool
}

type runner struct {
	cfg   Config
	mode  Mode
	loop  loop
	api   *modelAPI
	insts []*instance
	net   *rand.Rand
	reqs  []*request // by id; reqs[0] is unused
	count int        // instances counted by the limiters

	lambda   float64 // requests a second at each instance
	cumCost  []float64
	grantBuf pollOut

	res   *Result
	acc   []int // accepted units per second
	thr   []int // 429s per second
	waits []time.Duration
	// levels and levelWaits are the measurements of each priority level,
	// for the mixed scenario's Result.ByPriority.
	levels     [fairshare.Levels]PriorityResult
	levelWaits [fairshare.Levels][]time.Duration
	accepted   int
	err        error
	// shared holds what a mode's instances share within the run.
	shared map[any]any
	// onSample, when set, is called after each second's sample (Live).
	onSample func(now time.Duration)
}

// Run runs one mode through the scenario of cfg and measures it. Runs are
// deterministic: the same cfg and mode give the same Result. The demand
// (arrival times and costs) depends only on the seed and the instance, so
// every mode meets the same requests.
func Run(cfg Config, mode Mode) (*Result, error) {
	r, err := newRunner(cfg, mode)
	if err != nil {
		return nil, err
	}
	r.run()
	if r.err != nil {
		return nil, r.err
	}
	r.finish()
	return r.res, nil
}

// newRunner sets up a run of mode through cfg, up to its first event.
func newRunner(cfg Config, mode Mode) (*runner, error) {
	cfg = cfg.Defaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if mode.newLimiter == nil {
		return nil, fmt.Errorf("sim: mode %q has no limiter constructor; use Modes or ModeNamed", mode.Name)
	}
	r := &runner{cfg: cfg, mode: mode}
	r.api = newAPI(cfg.Server, cfg.schedule())
	r.api.publish = mode.headers
	r.net = rand.New(rand.NewPCG(cfg.Seed, 1))
	sum, mean := 0.0, 0.0
	for _, k := range cfg.Costs {
		sum += k.Weight
		r.cumCost = append(r.cumCost, sum)
	}
	for _, k := range cfg.Costs {
		mean += float64(k.Units) * k.Weight / sum
	}
	r.lambda = cfg.Demand / mean / 60
	secs := int((cfg.Duration + time.Second - 1) / time.Second)
	r.acc = make([]int, secs)
	r.thr = make([]int, secs)
	r.res = &Result{Mode: mode.Name, MeanQuota: cfg.meanQuota(), Allowance: cfg.allowance()}
	if !cfg.NoSeries {
		r.res.Series = make([]Sample, 0, secs)
	}

	total := cfg.Instances
	if cfg.Scenario == scenarioJoin {
		total++
	}
	r.count = cfg.Instances
	r.reqs = make([]*request, 1, int(r.lambda*cfg.Duration.Seconds()*float64(total)*1.1)+16)
	for i := range total {
		in := &instance{id: i, wakeAt: -1,
			rng: rand.New(rand.NewPCG(cfg.Seed, uint64(1000+i)))}
		r.insts = append(r.insts, in)
		if i < cfg.Instances {
			r.activate(in)
		} else {
			r.loop.schedule(event{at: cfg.JoinAt, kind: evJoin, inst: int32(i)})
		}
	}
	if !cfg.NoSeries {
		r.loop.schedule(event{at: 0, kind: evSample})
	}
	if r.err != nil {
		return nil, r.err
	}
	return r, nil
}

func (r *runner) activate(in *instance) {
	lim, err := r.mode.newLimiter(limiterEnv{now: r.loop.now, instances: r.count, inst: in.id, trace: r.cfg.trace, seed: r.cfg.Seed, cfg: r.cfg, shared: r.sharedState()})
	if err != nil {
		r.err = err
		return
	}
	in.active, in.lim = true, lim
	r.scheduleArrival(in)
}

func (r *runner) sharedState() map[any]any {
	if r.shared == nil {
		r.shared = map[any]any{}
	}
	return r.shared
}

func (r *runner) scheduleArrival(in *instance) {
	gap := in.rng.ExpFloat64() / r.lambda
	at := r.loop.now + time.Duration(gap*float64(time.Second))
	if at < r.cfg.Duration {
		r.loop.schedule(event{at: at, kind: evArrival, inst: int32(in.id)})
	}
}

func (r *runner) drawCost(in *instance) int {
	u := in.rng.Float64() * r.cumCost[len(r.cumCost)-1]
	for i, c := range r.cumCost {
		if u < c {
			return r.cfg.Costs[i].Units
		}
	}
	return r.cfg.Costs[len(r.cfg.Costs)-1].Units
}

// drawLevel is the priority level of the instance's next request: in the
// mixed scenario critical with probability CriticalShare, else background;
// the default level, drawing nothing, in the others.
func (r *runner) drawLevel(in *instance) int {
	if r.cfg.Scenario != scenarioMixed {
		return fairshare.Levels / 2
	}
	if in.rng.Float64() < r.cfg.CriticalShare {
		return fairshare.Levels - 1
	}
	return 0
}

func (r *runner) latency() time.Duration {
	l := r.cfg.Latency
	if l.Max == l.Min {
		return l.Min
	}
	return l.Min + time.Duration(r.net.Int64N(int64(l.Max-l.Min)+1))
}

func (r *runner) run() { r.runUntil(r.cfg.Duration) }

// runUntil handles the events before end (at most the run's end), in
// order, and leaves the later ones queued.
func (r *runner) runUntil(end time.Duration) {
	end = min(end, r.cfg.Duration)
	for {
		e, ok := r.loop.events.Peek()
		if !ok || e.at >= end || r.err != nil {
			return
		}
		r.loop.next()
		now := e.at
		switch e.kind {
		case evArrival:
			in := r.insts[e.inst]
			req := &request{id: len(r.reqs), inst: in.id, cost: r.drawCost(in), level: r.drawLevel(in), attempt: 1}
			r.reqs = append(r.reqs, req)
			r.levels[req.level].Requests++
			r.scheduleArrival(in)
			r.res.Requests++
			r.attempt(in, req)
		case evAttempt:
			req := r.reqs[e.req]
			r.attempt(r.insts[req.inst], req)
		case evWake:
			in := r.insts[e.inst]
			if e.at == in.wakeAt {
				in.wakeAt = -1
			}
			r.kick(in)
		case evServer:
			// The server counts the request as it arrives; its answer (and
			// the headers it wrote) reaches the client a leg later, later
			// still when the server holds the request (nginx's delay).
			req := r.reqs[e.req]
			resp := r.api.handle(now, req.cost)
			req.resp = resp
			r.res.Sent++
			sec := int(now / time.Second)
			if resp.Status == 200 {
				r.acc[sec] += req.cost
				r.accepted += req.cost
			} else {
				r.thr[sec]++
				r.res.Throttled++
			}
			r.loop.schedule(event{at: now + resp.Delay + r.latency(), kind: evResponse, req: int32(req.id)})
		case evResponse:
			req := r.reqs[e.req]
			in := r.insts[req.inst]
			in.lim.feedback(now, req, &req.resp)
			if req.resp.Status != 200 {
				if wait, again := r.retryWait(req, now); again {
					req.attempt++
					r.loop.schedule(event{at: now + wait, kind: evAttempt, req: int32(req.id)})
				} else {
					r.res.GaveUp++
					r.levels[req.level].GaveUp++
				}
			}
			r.kick(in)
		case evJoin:
			in := r.insts[e.inst]
			r.count++
			for _, o := range r.insts {
				if o.active {
					o.lim.setInstances(now, r.count)
					r.kick(o)
				}
			}
			r.activate(in)
		case evSample:
			r.sample(now)
			r.loop.schedule(event{at: now + time.Second, kind: evSample})
		}
	}
}

// retryDelay is the retry handler's wait before attempt: the Retry-After
// when the API sent one, else exponential backoff from 1 s.
func retryDelay(resp *response, attempt int) time.Duration {
	if resp.RetryAfter > 0 {
		return resp.RetryAfter
	}
	return time.Second << min(attempt-2, 10)
}

// attempt asks the instance's limiter for the request's units.
func (r *runner) attempt(in *instance, req *request) {
	now := r.loop.now
	req.asked = now
	switch in.lim.acquire(now, req) {
	case granted:
		r.send(req)
	case rejected:
		r.res.Rejected++
		r.levels[req.level].Rejected++
	case queued:
	}
	r.kick(in)
}

func (r *runner) send(req *request) {
	now := r.loop.now
	req.sent = now
	r.waits = append(r.waits, now-req.asked)
	if r.cfg.Scenario == scenarioMixed {
		r.levelWaits[req.level] = append(r.levelWaits[req.level], now-req.asked)
	}
	r.loop.schedule(event{at: now + r.latency(), kind: evServer, req: int32(req.id)})
}

// kick lets the instance's limiter grant or expire its waiters, and asks to
// be woken when it next can.
func (r *runner) kick(in *instance) {
	now := r.loop.now
	out := &r.grantBuf
	out.granted, out.rejected = out.granted[:0], out.rejected[:0]
	next, ok := in.lim.poll(now, out)
	for _, req := range out.granted {
		r.send(req)
	}
	r.res.Rejected += len(out.rejected)
	for _, req := range out.rejected {
		r.levels[req.level].Rejected++
	}
	if ok {
		next = max(next, now)
		if in.wakeAt < now || next < in.wakeAt {
			in.wakeAt = next
			r.loop.schedule(event{at: next, kind: evWake, inst: int32(in.id)})
		}
	}
}

func (r *runner) sample(now time.Duration) {
	s := Sample{At: now, Quota: r.api.quotaAt(now), Used: r.api.used(now)}
	for _, in := range r.insts {
		if in.active {
			s.Rate += in.lim.rate(now)
			s.Queued += in.lim.queued()
		}
	}
	r.res.Series = append(r.res.Series, s)
	if r.onSample != nil {
		r.onSample(now)
	}
}
