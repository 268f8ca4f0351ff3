package sim

import "slices"

// Spread is the median, minimum and maximum of one metric over many seeds.
type Spread struct {
	Median, Min, Max float64
}

func spreadOf(v []float64) Spread {
	if len(v) == 0 {
		return Spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return Spread{Median: m, Min: s[0], Max: s[len(s)-1]}
}

// SeedSpread is one mode's results over seeds Seed, Seed+1, ….
type SeedSpread struct {
	Mode  string
	Seeds int
	// Throughput (units a minute), Share (0..1), Throttled, Rejected,
	// GaveUp, P95Wait and Recovery (seconds) over the seeds. Recovery
	// counts only the seeds that recovered; Unrecovered counts the others.
	Throughput, Share, Throttled, Rejected, GaveUp, P95Wait, Recovery Spread
	Unrecovered                                                       int
	// AllowanceShare and ThrottledShare (0..1) over the seeds.
	AllowanceShare, ThrottledShare Spread
	// Runs holds every seed's result, in seed order, without time series.
	Runs []*Result
}

// RunSeeds runs mode through cfg with n seeds from cfg.Seed on and gives
// the spread of each metric, so that one lucky seed proves nothing.
func RunSeeds(cfg Config, mode Mode, n int) (*SeedSpread, error) {
	cfg = cfg.Defaults()
	cfg.NoSeries = true
	out := &SeedSpread{Mode: mode.Name, Seeds: n}
	var th, sh, thr, rej, gu, p95, rec, al, ts []float64
	for i := range n {
		c := cfg
		c.Seed = cfg.Seed + uint64(i)
		r, err := Run(c, mode)
		if err != nil {
			return nil, err
		}
		out.Runs = append(out.Runs, r)
		th = append(th, r.Throughput)
		sh = append(sh, r.Share)
		thr = append(thr, float64(r.Throttled))
		rej = append(rej, float64(r.Rejected))
		gu = append(gu, float64(r.GaveUp))
		p95 = append(p95, r.P95Wait.Seconds())
		al = append(al, r.AllowanceShare)
		ts = append(ts, r.ThrottledShare())
		if r.HasRecovery {
			rec = append(rec, r.Recovery.Seconds())
		} else if cfg.Scenario == scenarioDrop {
			out.Unrecovered++
		}
	}
	out.Throughput, out.Share, out.Throttled = spreadOf(th), spreadOf(sh), spreadOf(thr)
	out.Rejected, out.GaveUp, out.P95Wait, out.Recovery = spreadOf(rej), spreadOf(gu), spreadOf(p95), spreadOf(rec)
	out.AllowanceShare, out.ThrottledShare = spreadOf(al), spreadOf(ts)
	return out, nil
}
