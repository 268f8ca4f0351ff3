package sim

import (
	"math"
	"time"
)

// allowance is the most units an ideal client could have had accepted over
// the run, beginning with a fresh server: the yardstick of
// Result.AllowanceShare, which, unlike Share, counts what each kind of
// server lets through.
//
//   - The window kinds (fixed window, sliding log, sliding counter): the
//     quota of every window of the run, windows from 0 on, each at the
//     quota in force at its start (ceil(duration / window) windows). A
//     fixed window and a sliding log take exactly that; a sliding counter
//     takes at most that, the quota of each window.
//   - A token bucket: the full bucket at the start, plus the refill, the
//     quota in force per window over the run: Burst + ∫ quota/window dt.
//   - A leaky bucket (nginx): the same with burst + 1 (the request nginx
//     serves on schedule, plus the burst), for requests of one unit.
//
// For the seeds' server and scenario it is the mean quota times the run,
// 43,500 units, so AllowanceShare equals Share.
func (c Config) allowance() float64 {
	c = c.Defaults()
	s, sched := c.Server, c.schedule()
	switch s.Kind {
	case kindTokenBucket, kindLeakyBucket:
		refill := 0.0
		for i, st := range sched {
			end := c.Duration
			if i+1 < len(sched) {
				end = min(sched[i+1].At, c.Duration)
			}
			if end > st.At {
				refill += float64(st.Units) * float64(end-st.At) / float64(s.Window)
			}
		}
		if s.Kind == kindLeakyBucket {
			return float64(s.Burst+1) + refill
		}
		burst := s.Burst
		if burst == 0 {
			burst = c.Quota
		}
		return float64(burst) + refill
	}
	windows := int64(math.Ceil(float64(c.Duration) / float64(s.Window)))
	total := 0.0
	for k := range windows {
		total += float64(quotaAt(sched, time.Duration(k)*s.Window))
	}
	return total
}
