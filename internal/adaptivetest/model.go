package adaptivetest

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/headroom-go/headroom/internal/eventqueue"
)

// model is one run: the dependency's workers and their FIFO queue, the
// events to come, and what is measured.
type model struct {
	cfg Config
	lim Limiter
	rng *rand.Rand // inter-arrival and service times, drawn in event order
	end time.Duration

	events     eventqueue.Queue[event]
	queue      []*call // admitted calls waiting for a worker
	busy       int     // workers serving a call
	nextSample time.Duration

	res Result
	lat [][]time.Duration // the latencies of the calls admitted in each phase
}

func newModel(cfg Config, lim Limiter) *model {
	m := &model{cfg: cfg, lim: lim, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)),
		end: cfg.Phases[len(cfg.Phases)-1].Until,
		res: Result{Phases: make([]PhaseResult, len(cfg.Phases))},
		lat: make([][]time.Duration, len(cfg.Phases))}
	for i, p := range cfg.Phases {
		m.res.Phases[i].Workers = p.Workers
	}
	return m
}

// run plays the events up to the end of the last phase.
func (m *model) run() {
	m.events.Push(event{at: m.interArrival(), kind: arrival})
	lastPhase := 0
	for {
		e, ok := m.events.Pop()
		if !ok || e.at >= m.end {
			break
		}
		m.sampleUntil(e.at)
		if p := m.phaseAt(e.at); p != lastPhase {
			lastPhase = p
			m.serve(e.at) // more workers: start the queue at once
		}
		switch e.kind {
		case arrival:
			m.arrive(e.at)
		case done:
			m.complete(e.at, e.call)
		}
	}
	m.sampleUntil(m.end) // a quiet end still has its samples
}

// phaseAt is the index of the phase that model time t falls in.
func (m *model) phaseAt(t time.Duration) int {
	for i, p := range m.cfg.Phases {
		if t < p.Until {
			return i
		}
	}
	return len(m.cfg.Phases) - 1
}

// sampleUntil records the limit at every sample time up to t.
func (m *model) sampleUntil(t time.Duration) {
	for ; m.nextSample <= t && m.nextSample < m.end; m.nextSample += m.cfg.Every {
		m.res.Trace = append(m.res.Trace, m.lim.Limit())
	}
}

func (m *model) interArrival() time.Duration {
	return time.Duration(m.rng.ExpFloat64() / m.cfg.Load * float64(time.Second))
}

// arrive offers a call to the limiter at now, and schedules the next
// arrival: the load is open-loop.
func (m *model) arrive(now time.Duration) {
	m.events.Push(event{at: now + m.interArrival(), kind: arrival})
	p := m.phaseAt(now)
	m.res.Phases[p].Offered++
	tok, ok := m.lim.Acquire(now)
	if !ok {
		m.res.Phases[p].Rejected++
		return
	}
	m.res.Phases[p].Admitted++
	c := &call{sent: now, token: tok, phase: p,
		service: m.cfg.Floor + time.Duration(m.rng.ExpFloat64()*float64(m.cfg.Exp))}
	if m.busy < m.cfg.Phases[p].Workers && len(m.queue) == 0 {
		m.start(now, c)
	} else {
		m.queue = append(m.queue, c)
	}
}

// start gives c a worker at now.
func (m *model) start(now time.Duration, c *call) {
	m.busy++
	m.events.Push(event{at: now + c.service, kind: done, call: c})
}

// serve starts queued calls while the phase has free workers.
func (m *model) serve(now time.Duration) {
	w := m.cfg.Phases[m.phaseAt(now)].Workers
	for m.busy < w && len(m.queue) > 0 {
		c := m.queue[0]
		m.queue = m.queue[1:]
		m.start(now, c)
	}
}

// complete ends c at now: its worker is free and the limiter learns its
// latency.
func (m *model) complete(now time.Duration, c *call) {
	m.busy--
	latency := now - c.sent
	m.lim.Release(now, latency, c.token)
	m.res.Phases[m.phaseAt(now)].Completed++
	m.lat[c.phase] = append(m.lat[c.phase], latency)
	m.serve(now)
}

// summarize fills in each phase's goodput, latencies and limit figures.
func (m *model) summarize() {
	cfg, trace := m.cfg, m.res.Trace
	var from time.Duration
	for i, p := range cfg.Phases {
		r := &m.res.Phases[i]
		r.Goodput = float64(r.Completed) / (p.Until - from).Seconds()
		if l := m.lat[i]; len(l) > 0 {
			slices.Sort(l)
			r.P50 = l[(len(l)-1)*50/100]
			r.P99 = l[(len(l)-1)*99/100]
		}
		b := min(int(p.Until/cfg.Every), len(trace))
		a := min(int((from+(p.Until-from)/2)/cfg.Every), b)
		r.MinLimit, r.MaxLimit = math.MaxInt, 0
		var sum float64
		for _, v := range trace[a:b] {
			sum += float64(v)
			r.MinLimit, r.MaxLimit = min(r.MinLimit, v), max(r.MaxLimit, v)
		}
		if b > a {
			r.MeanLimit = sum / float64(b-a)
		}
		r.Follow = follow(trace, int(from/cfg.Every), b, float64(p.Workers), cfg.Band, int(cfg.Hold/cfg.Every), cfg.Every)
		from = p.Until
	}
}
