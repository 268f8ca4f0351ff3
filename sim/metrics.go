package sim

import (
	"slices"
	"time"

	"github.com/headroom-go/headroom/internal/fairshare"
)

// levelNames names fairshare's levels as limit.Priority does.
var levelNames = [fairshare.Levels]string{"background", "default", "critical"}

// Result is one mode's measurements over one run, defined as the columns of
// the seeds' comparison table.
type Result struct {
	Mode string

	// Throughput is the units the API accepted, per minute of the run.
	Throughput float64
	// MeanQuota is the time-weighted mean quota of the run, units a minute.
	MeanQuota float64
	// Share is Throughput / MeanQuota.
	Share float64
	// Allowance is the most units an ideal client could have had accepted
	// from a fresh server of the kind (docs/simulator.md, "The
	// allowance"), and AllowanceShare is Accepted / Allowance: the share
	// that counts a bucket's burst and the windows a run starts.
	Allowance      float64
	AllowanceShare float64
	// Throttled counts the 429 responses.
	Throttled int
	// Sent counts the attempts that reached the API: accepted or 429.
	Sent int
	// Rejected counts the requests the limiter did not send: its queue was
	// full, or the wait would have been longer than its maximum.
	Rejected int
	// GaveUp counts the requests that got a 429 on every attempt.
	GaveUp int
	// P95Wait is the 95th percentile of the wait for units over every
	// attempt the limiter sent (0 for an attempt sent at once).
	P95Wait time.Duration
	// Recovery is the time after the quota comes back until the units
	// accepted over the trailing 60 s reach 90% of those accepted in the
	// minute before the drop, in whole seconds. HasRecovery is false when
	// the scenario has no drop, or the run ends first.
	Recovery    time.Duration
	HasRecovery bool

	// ByPriority holds the measurements of each priority level, critical
	// first, in the mixed scenario; nil in the others.
	ByPriority []PriorityResult

	// Requests counts the requests the clients made (not attempts).
	Requests int
	// Accepted is the units the API accepted.
	Accepted int

	// Series is the time series, one sample a second.
	Series []Sample
}

// PriorityResult is what one priority level of the mixed scenario's
// requests met.
type PriorityResult struct {
	// Priority names the level: "critical" or "background".
	Priority string
	// Requests, Rejected and GaveUp count as Result's do, for this level.
	Requests, Rejected, GaveUp int
	// P95Wait is the 95th percentile of the wait of this level's attempts.
	P95Wait time.Duration
}

// Sample is one second of the time series.
type Sample struct {
	At        time.Duration // the start of the second
	Rate      float64       // the sum of the instances' rates at At, units a minute (0 without a rate)
	Quota     int           // the quota in force at At, units per window
	Used      int           // what the API's limiter counts against it at At
	Queued    int           // requests waiting in the limiters at At
	Accepted  int           // units accepted during the second
	Throttled int           // 429s during the second
}

// ThrottledShare is the share of the attempts sent that got a 429 (0 when
// none was sent).
func (r *Result) ThrottledShare() float64 {
	if r.Sent == 0 {
		return 0
	}
	return float64(r.Throttled) / float64(r.Sent)
}

func (r *runner) finish() {
	res, cfg := r.res, r.cfg
	minutes := cfg.Duration.Minutes()
	res.Accepted = r.accepted
	res.Throughput = float64(r.accepted) / minutes
	if res.MeanQuota > 0 {
		res.Share = res.Throughput / res.MeanQuota
	}
	if res.Allowance > 0 {
		res.AllowanceShare = float64(r.accepted) / res.Allowance
	}
	res.P95Wait = percentile(r.waits, 0.95)
	for i := range res.Series {
		sec := int(res.Series[i].At / time.Second)
		if sec < len(r.acc) {
			res.Series[i].Accepted = r.acc[sec]
			res.Series[i].Throttled = r.thr[sec]
		}
	}
	if cfg.Scenario == scenarioMixed {
		for level := fairshare.Levels - 1; level >= 0; level-- {
			l := r.levels[level]
			if l.Requests == 0 {
				continue
			}
			l.Priority = levelNames[level]
			l.P95Wait = percentile(r.levelWaits[level], 0.95)
			res.ByPriority = append(res.ByPriority, l)
		}
	}
	if cfg.Scenario == scenarioDrop && cfg.DropShare > 0 {
		res.Recovery, res.HasRecovery = recovery(r.acc, cfg.DropAt, cfg.DropAt+cfg.DropFor)
	}
}

// percentile is the nearest-rank percentile of d (0 when empty). It sorts d.
func percentile(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	slices.Sort(d)
	i := int(float64(len(d))*p+0.999999999) - 1
	return d[min(max(i, 0), len(d)-1)]
}

// recovery measures on acc, the accepted units of each second: the minute
// before the drop accepted base units; it is the first whole second T at or
// after back (the quota comes back) at which the units of the 60 seconds
// before T reach 90% of base, as T - back.
func recovery(acc []int, drop, back time.Duration) (time.Duration, bool) {
	d, b := int(drop/time.Second), int(back/time.Second)
	if d < 60 || b > len(acc) {
		return 0, false
	}
	base := 0
	for _, a := range acc[d-60 : d] {
		base += a
	}
	trailing := 0
	for _, a := range acc[b-60 : b] {
		trailing += a
	}
	for t := b; ; t++ {
		if 10*trailing >= 9*base { // 90%, in integers: 0.9 is not exact in binary
			return time.Duration(t-b) * time.Second, true
		}
		if t >= len(acc) {
			return 0, false
		}
		trailing += acc[t] - acc[t-60]
	}
}
