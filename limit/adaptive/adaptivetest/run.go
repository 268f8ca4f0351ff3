package adaptivetest

import (
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/headroom-go/headroom/internal/eventqueue"
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
	Trace  []int // the limit every Config.Every, from time 0 to the end
}

// Run drives lim through the scenario cfg and reports per phase, or
// returns Validate's error. The same cfg (Seed included) and a
// deterministic lim give the same Result.
func Run(cfg Config, lim Limiter) (Result, error) {
	if err := cfg.Validate(); err != nil {
		return Result{}, err
	}
	cfg = cfg.withDefaults()
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
		h          eventqueue.Queue[event]
		queue      []*call
		busy       int
		nextSample time.Duration
	)
	sampleUntil := func(t time.Duration) {
		for ; nextSample <= t && nextSample < end; nextSample += cfg.Every {
			res.Trace = append(res.Trace, lim.Limit())
		}
	}
	interArrival := func() time.Duration {
		return time.Duration(rng.ExpFloat64() / cfg.Load * float64(time.Second))
	}
	start := func(now time.Duration, c *call) {
		busy++
		h.Push(event{at: now + c.service, kind: done, call: c})
	}
	serve := func(now time.Duration) {
		w := cfg.Phases[phaseAt(now)].Workers
		for busy < w && len(queue) > 0 {
			c := queue[0]
			queue = queue[1:]
			start(now, c)
		}
	}
	h.Push(event{at: interArrival(), kind: arrival})
	lastPhase := 0
	for {
		e, ok := h.Pop()
		if !ok || e.at >= end {
			break
		}
		sampleUntil(e.at)
		now := e.at
		if p := phaseAt(now); p != lastPhase {
			lastPhase = p
			serve(now) // more workers: start the queue at once
		}
		switch e.kind {
		case arrival:
			h.Push(event{at: now + interArrival(), kind: arrival})
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
		case done:
			busy--
			c := e.call
			latency := now - c.sent
			lim.Release(now, latency, c.token)
			res.Phases[phaseAt(now)].Completed++
			lat[c.phase] = append(lat[c.phase], latency)
			serve(now)
		}
	}
	sampleUntil(end) // a quiet end still has its samples

	var from time.Duration
	for i, p := range cfg.Phases {
		r := &res.Phases[i]
		r.Goodput = float64(r.Completed) / (p.Until - from).Seconds()
		if l := lat[i]; len(l) > 0 {
			slices.Sort(l)
			r.P50 = l[(len(l)-1)*50/100]
			r.P99 = l[(len(l)-1)*99/100]
		}
		b := min(int(p.Until/cfg.Every), len(res.Trace))
		a := min(int((from+(p.Until-from)/2)/cfg.Every), b)
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
	return res, nil
}
