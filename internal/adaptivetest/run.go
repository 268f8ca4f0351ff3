package adaptivetest

import "time"

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
// returns every problem with cfg, each a *headroom.ConfigError, joined with
// errors.Join. The same cfg (Seed included) and a deterministic lim give
// the same Result.
func Run(cfg Config, lim Limiter) (Result, error) {
	if err := cfg.validate(); err != nil {
		return Result{}, err
	}
	m := newModel(cfg.withDefaults(), lim)
	m.run()
	m.summarize()
	return m.res, nil
}
