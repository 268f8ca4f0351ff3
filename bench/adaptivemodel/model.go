// Package adaptivemodel is a model dependency for evaluating adaptive
// concurrency limits: c workers behind an unbounded FIFO queue, so a call's
// latency is its service time plus its time in the queue, driven by an
// open-loop Poisson load on virtual time. Calls the limiter refuses are
// counted and not retried.
//
// The model is a single-threaded discrete-event simulation. It calls the
// limiter under test with the model time of each event; a limiter that reads
// the real clock (failsafe-go) is driven inside a testing/synctest bubble by
// an adapter that sleeps to the model time before each call (see Advance).
package adaptivemodel

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// Limiter is the limiter under test, seen from the model.
type Limiter interface {
	// Acquire asks for a slot at model time now; the token goes back to
	// Release.
	Acquire(now time.Duration) (token any, ok bool)
	// Release ends the call that token admitted, at now after latency.
	Release(now, latency time.Duration, token any)
	// Limit is the current concurrency limit.
	Limit() int
}

// Phase is a stretch of model time with a given number of workers.
type Phase struct {
	Until   time.Duration
	Workers int
}

// Config is one scenario.
type Config struct {
	// Service time: Floor plus an exponential variate of mean Exp.
	Floor, Exp time.Duration
	// Load is the offered arrival rate, in calls per second.
	Load   float64
	Phases []Phase
	Seed   uint64
	// Every is how often the limit is sampled (default 100 ms).
	Every time.Duration
	// Band is the relative distance from the worker count that counts as
	// "following" it (default 0.2), and Hold how long the limit's trailing
	// one-second mean must stay inside the band (default 5 s).
	Band float64
	Hold time.Duration
}

// Service is the mean service time.
func (c Config) Service() time.Duration { return c.Floor + c.Exp }

// UnloadedP99 is the p99 latency of a call that never queues.
func (c Config) UnloadedP99() time.Duration {
	return c.Floor + time.Duration(float64(c.Exp)*math.Log(100))
}

// PhaseResult is what happened during one phase.
type PhaseResult struct {
	Workers             int
	Offered, Admitted   int
	Rejected, Completed int
	Goodput             float64       // completions a second
	P50, P99            time.Duration // of the calls admitted in the phase
	MeanLimit           float64       // over the second half of the phase
	MinLimit, MaxLimit  int           // over the second half of the phase
	// Follow is how long after the phase began the limit entered the band
	// around Workers and stayed there for Hold (or to the phase's end);
	// -1 if it never did.
	Follow time.Duration
}

// Result is a run.
type Result struct {
	Phases []PhaseResult
	Trace  []int // the limit every Config.Every
}

type event struct {
	at   time.Duration
	kind int // evArrival, evDone
	call *call
}

const (
	evArrival = iota
	evDone
)

type call struct {
	sent    time.Duration
	service time.Duration
	token   any
	phase   int
}

type events []event

func (h events) Len() int { return len(h) }
func (h events) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].kind > h[j].kind // completions first at a tie
}
func (h events) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *events) Push(x any)   { *h = append(*h, x.(event)) }
func (h *events) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}

// Run drives lim through the scenario and reports per phase.
func Run(cfg Config, lim Limiter) Result {
	if cfg.Every <= 0 {
		cfg.Every = 100 * time.Millisecond
	}
	if cfg.Band <= 0 {
		cfg.Band = 0.2
	}
	if cfg.Hold <= 0 {
		cfg.Hold = 5 * time.Second
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, 0x5eed))
	end := cfg.Phases[len(cfg.Phases)-1].Until
	phaseAt := func(t time.Duration) int {
		for i, p := range cfg.Phases {
			if t < p.Until {
				return i
			}
		}
		return len(cfg.Phases) - 1
	}
	res := Result{Phases: make([]PhaseResult, len(cfg.Phases))}
	lat := make([][]time.Duration, len(cfg.Phases))
	for i, p := range cfg.Phases {
		res.Phases[i].Workers = p.Workers
	}

	var (
		h     events
		queue []*call
		busy  int
	)
	interArrival := func() time.Duration {
		return time.Duration(rng.ExpFloat64() / cfg.Load * float64(time.Second))
	}
	start := func(now time.Duration, c *call) {
		busy++
		heap.Push(&h, event{at: now + c.service, kind: evDone, call: c})
	}
	serve := func(now time.Duration) {
		w := cfg.Phases[phaseAt(now)].Workers
		for busy < w && len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			start(now, c)
		}
	}
	heap.Push(&h, event{at: interArrival(), kind: evArrival})
	nextSample := time.Duration(0)
	lastPhase := 0
	for len(h) > 0 {
		e := heap.Pop(&h).(event)
		if e.at >= end {
			break
		}
		for nextSample <= e.at {
			res.Trace = append(res.Trace, lim.Limit())
			nextSample += cfg.Every
		}
		now := e.at
		if p := phaseAt(now); p != lastPhase {
			lastPhase = p
			serve(now) // more workers: start the queue at once
		}
		switch e.kind {
		case evArrival:
			heap.Push(&h, event{at: now + interArrival(), kind: evArrival})
			p := phaseAt(now)
			res.Phases[p].Offered++
			tok, ok := lim.Acquire(now)
			if !ok {
				res.Phases[p].Rejected++
				continue
			}
			res.Phases[p].Admitted++
			c := &call{sent: now, token: tok, phase: p,
				service: cfg.Floor + time.Duration(rng.ExpFloat64()*float64(cfg.Exp))}
			if busy < cfg.Phases[p].Workers && len(queue) == 0 {
				start(now, c)
			} else {
				queue = append(queue, c)
			}
		case evDone:
			busy--
			c := e.call
			latency := now - c.sent
			lim.Release(now, latency, c.token)
			res.Phases[phaseAt(now)].Completed++
			lat[c.phase] = append(lat[c.phase], latency)
			serve(now)
		}
	}

	// Summaries.
	var from time.Duration
	for i, p := range cfg.Phases {
		r := &res.Phases[i]
		r.Goodput = float64(r.Completed) / (p.Until - from).Seconds()
		if l := lat[i]; len(l) > 0 {
			slices.Sort(l)
			r.P50 = l[(len(l)-1)*50/100]
			r.P99 = l[(len(l)-1)*99/100]
		}
		a, b := int((from+(p.Until-from)/2)/cfg.Every), min(int(p.Until/cfg.Every), len(res.Trace))
		r.MinLimit, r.MaxLimit = math.MaxInt, 0
		var sum float64
		for _, v := range res.Trace[a:b] {
			sum += float64(v)
			r.MinLimit, r.MaxLimit = min(r.MinLimit, v), max(r.MaxLimit, v)
		}
		if b > a {
			r.MeanLimit = sum / float64(b-a)
		}
		r.Follow = follow(res.Trace, int(from/cfg.Every), b, float64(p.Workers), cfg.Band, int(cfg.Hold/cfg.Every), cfg.Every)
		from = p.Until
	}
	return res
}

// follow is the time from trace index a until the limit's trailing one-second
// mean enters [c(1−band), c(1+band)] and stays there for hold samples (or
// until index b). The mean, because an AIMD limit saws by design.
func follow(trace []int, a, b int, c, band float64, hold int, every time.Duration) time.Duration {
	lo, hi := c*(1-band), c*(1+band)
	w := max(int(time.Second/every), 1)
	in := func(i int) bool {
		var s float64
		n := 0
		for j := max(i-w+1, 0); j <= i; j++ {
			s += float64(trace[j])
			n++
		}
		m := s / float64(n)
		return m >= lo && m <= hi
	}
	for i := a; i < b; i++ {
		ok := true
		for j := i; j < min(i+hold, b); j++ {
			if !in(j) {
				ok = false
				break
			}
		}
		if ok {
			return time.Duration(i-a) * every
		}
	}
	return -1
}

// Clock advances a testing/synctest bubble's fake clock to model time, for
// limiters that read the clock themselves. Create it inside the bubble, and
// call Advance before each call into the limiter; the model is
// single-threaded, so every Sleep returns at once at the exact model time.
type Clock struct{ start time.Time }

// NewClock starts model time at the bubble's now.
func NewClock() *Clock { return &Clock{start: time.Now()} }

// Advance sleeps until model time now.
func (c *Clock) Advance(now time.Duration) {
	if d := now - time.Since(c.start); d > 0 {
		time.Sleep(d)
	}
}
