package sim

import "time"

// Live is one run that moves forward only when its caller says, so that a
// reader can watch it: the interactive page advances it a little each
// frame and draws what it shows. It is the run Run makes — the same
// events in the same order — so a Live advanced to its end gives the
// Result Run gives for the same Config and Mode. A Live is not safe for
// concurrent use.
type Live struct {
	r       *runner
	now     time.Duration
	samples []LiveSample
	done    bool
}

// LiveSample is one second of a live run, taken where Run takes each
// Sample of its Series. Rates are units a minute.
type LiveSample struct {
	At time.Duration
	// Rates holds each active instance's rate, by instance (an instance
	// that joins later adds an entry); Rate is their sum.
	Rates []float64
	Rate  float64
	// Quota is the quota in force at At, per minute (the quota per window
	// scaled to a minute).
	Quota float64
	// Accepted is the units the API accepted in the 60 whole seconds
	// before At (fewer at the start).
	Accepted int
	// Throttled is the 429s in the second before At.
	Throttled int
	// Queued is the requests waiting in the limiters at At.
	Queued int
}

// Gauges are a live run's figures at the time it has run to: what the
// page's tiles show.
type Gauges struct {
	At time.Duration
	// Accepted is the units the API accepted in the last 60 s, counted by
	// whole seconds (the second under way included).
	Accepted int
	// Rate is the sum of the instances' rates, units a minute (0 for a
	// mode without one); Instances is how many are running.
	Rate      float64
	Instances int
	// Quota is the quota in force, per minute.
	Quota float64
	// Throttled, Rejected and GaveUp count as Result does, so far.
	Throttled, Rejected, GaveUp int
	// Queued is the requests waiting in the limiters now.
	Queued int
	// P95Wait is the 95th percentile of the waits so far, as Result's.
	P95Wait time.Duration
}

// NewLive sets up a run of mode through cfg at time 0, with a time series
// whatever cfg.NoSeries says. It returns Run's errors for a bad cfg or mode.
func NewLive(cfg Config, mode Mode) (*Live, error) {
	cfg.NoSeries = false
	r, err := newRunner(cfg, mode)
	if err != nil {
		return nil, err
	}
	l := &Live{r: r}
	r.onSample = l.sample
	return l, nil
}

// Config is the run's configuration, defaults filled in.
func (l *Live) Config() Config { return l.r.cfg }

// Now is the time the run has been advanced to.
func (l *Live) Now() time.Duration { return l.now }

// Done reports whether the run has reached its end (Config.Duration).
func (l *Live) Done() bool { return l.done }

// Err is the error that stopped the run early (an engine that refused an
// instance that joined), or nil.
func (l *Live) Err() error { return l.r.err }

// Advance runs every event before t, at most to the run's end, and leaves
// the run at t. A t at or before Now changes nothing.
func (l *Live) Advance(t time.Duration) {
	end := l.r.cfg.Duration
	t = min(t, end)
	if t <= l.now || l.r.err != nil {
		return
	}
	l.r.runUntil(t)
	l.now = t
	if t == end || l.r.err != nil {
		l.finish()
	}
}

// finish measures the run as Run does, once.
func (l *Live) finish() {
	if !l.done {
		l.done = true
		if l.r.err == nil {
			l.r.finish()
		}
	}
}

// Result advances the run to its end and returns what Run returns for it.
func (l *Live) Result() (*Result, error) {
	l.Advance(l.r.cfg.Duration)
	if l.r.err != nil {
		return nil, l.r.err
	}
	return l.r.res, nil
}

// Samples returns the seconds sampled so far, from the n-th on (0: all),
// so that a caller that has drawn n of them asks only for the new ones.
// The caller must not change them.
func (l *Live) Samples(n int) []LiveSample {
	return l.samples[min(max(n, 0), len(l.samples)):]
}

// sample is called at each second's Sample, where Run's Series takes it.
func (l *Live) sample(now time.Duration) {
	r := l.r
	s := LiveSample{At: now, Quota: r.quotaPerMinute(now), Accepted: r.acceptedBefore(now)}
	sec := int(now / time.Second)
	if sec > 0 {
		s.Throttled = r.thr[sec-1]
	}
	for _, in := range r.insts {
		if in.active {
			rate := in.lim.rate(now)
			s.Rates = append(s.Rates, rate)
			s.Rate += rate
			s.Queued += in.lim.queued()
		}
	}
	l.samples = append(l.samples, s)
}

// Gauges returns the run's figures at Now.
func (l *Live) Gauges() Gauges {
	r := l.r
	// The second under way counts: the accepted units of the seconds
	// begun before Now.
	g := Gauges{At: l.now, Accepted: r.acceptedBefore(l.now + time.Second - 1), Quota: r.quotaPerMinute(l.now),
		Throttled: r.res.Throttled, Rejected: r.res.Rejected, GaveUp: r.res.GaveUp}
	for _, in := range r.insts {
		if in.active {
			g.Instances++
			g.Rate += in.lim.rate(l.now)
			g.Queued += in.lim.queued()
		}
	}
	if l.done && r.err == nil {
		g.P95Wait = r.res.P95Wait
	} else {
		// percentile sorts the waits where they are: their order counts for
		// nothing, and the slice grows to hundreds of thousands.
		g.P95Wait = percentile(r.waits, 0.95)
	}
	return g
}

// acceptedBefore is the units accepted in the 60 whole seconds before
// the second that t falls in.
func (r *runner) acceptedBefore(t time.Duration) int {
	end := min(int(t/time.Second), len(r.acc))
	sum := 0
	for _, a := range r.acc[max(end-60, 0):end] {
		sum += a
	}
	return sum
}

// quotaPerMinute is the quota in force at t, per minute.
func (r *runner) quotaPerMinute(t time.Duration) float64 {
	return float64(r.api.quotaAt(t)) * float64(time.Minute) / float64(r.cfg.Server.Window)
}
