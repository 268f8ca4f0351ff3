package main

import (
	"fmt"
	"io"
	"math"
	"time"
)

// checkLimit holds one limit's admitted permits, window by window, to what
// it allows: its own bound, plus what the processes hold in flight (each
// max(Batch, callers × the largest cost) + that cost − 1); in the windows
// around a fault, plus the fault bound (docs/fleet.md): one store the
// restart or failover forgot, and, failing open, the processes' shares
// over the outage.
func (r *report) checkLimit(s spec, check func(bool, string, ...any), w io.Writer) {
	bucket := max(s.Window, time.Second)
	first := r.start.Truncate(time.Second)
	n := int(r.duration / bucket)
	admitted := make([]int, n)
	for _, wr := range r.workers {
		for sec, permits := range wr.Admitted[s.Name] {
			if i := int(time.Unix(sec, 0).Sub(first) / bucket); i >= 0 && i < n {
				admitted[i] += permits
			}
		}
	}
	p := float64(r.processes)
	inflight := p * float64(max(s.Batch, callers*s.MaxCost)+s.MaxCost-1)
	allowed := float64(s.Permits)
	if s.Window == 0 {
		allowed += s.Rate * bucket.Seconds()
	}
	over, faultOver, worst, worstFault, total := 0, 0, 0.0, math.Inf(-1), 0
	for i, a := range admitted {
		total += a
		from := first.Add(time.Duration(i) * bucket)
		extra, faulty := r.faultExtra(s, from, from.Add(bucket))
		excess := float64(a) - allowed - inflight
		if faulty {
			worstFault = max(worstFault, excess/extra)
			if excess > extra {
				faultOver++
			}
			continue
		}
		worst = max(worst, float64(a)/allowed)
		if excess > 0 {
			over++
		}
	}
	nominal := s.Rate * r.duration.Seconds()
	if s.Window > 0 {
		nominal = float64(s.Permits) * r.duration.Seconds() / s.Window.Seconds()
	}
	fmt.Fprintf(w, "     limit %s: %d permits admitted, %.1f%% of what it allows over the run; the fullest window %.1f%% of its allowance\n",
		s.Name, total, 100*float64(total)/nominal, 100*worst)
	check(over == 0, "limit %s: every window of %v without a fault within its bound plus %.0f in flight (%d over)", s.Name, bucket, inflight, over)
	check(faultOver == 0, "limit %s: every window around a fault within the fault bound too (%d over; the largest excess %.0f%% of its bound)",
		s.Name, faultOver, 100*max(worstFault, 0))
}

// faultExtra is the fault bound of a window [from, to) that a fault
// touches (from a second before it starts to a window and two seconds after
// it ends); faulty is false for the others.
func (r *report) faultExtra(s spec, from, to time.Time) (extra float64, faulty bool) {
	p := float64(r.processes)
	for _, f := range r.faults {
		if to.Before(f.start.Add(-time.Second)) || from.After(f.end.Add(s.Window+2*time.Second)) {
			continue
		}
		faulty = true
		extra += float64(s.Permits) // the store the fault forgot
		if !s.FailOpen {
			continue
		}
		outage := f.down
		share := math.Max(math.Floor(float64(s.Permits)/p), 1)
		extra += p * share // each process's share, built full at the outage's start
		if s.Window == 0 {
			extra += outage.Seconds() * s.Rate // and its rate over the outage
		}
	}
	return extra, faulty
}

// checkResources holds the processes and Redis to what a soak must leave
// behind: goroutines back where they started, a heap that does not grow
// with time, and no key of the fleet one TTL after the end.
func (r *report) checkResources(check func(bool, string, ...any)) {
	back, grew := 0, 0
	var heapEnd uint64
	for _, wr := range r.workers {
		if wr.GoroutinesEnd <= wr.GoroutinesStart {
			back++
		}
		if h := wr.Heap; len(h) >= 4 {
			early, last := h[len(h)/4], h[len(h)-1]
			if float64(last) > 1.5*float64(early)+4<<20 {
				grew++
			}
			heapEnd = max(heapEnd, last)
		}
	}
	check(back == len(r.workers), "goroutines back to their start in %d of %d processes", back, len(r.workers))
	check(r.goroutines[1] <= r.goroutines[0], "the soak's own goroutines: %d at the start, %d at the end", r.goroutines[0], r.goroutines[1])
	check(grew == 0, "no heap grew past 1.5× its size at a quarter of the run plus 4 MiB (%d did); the largest at the end %.1f MiB",
		grew, float64(heapEnd)/(1<<20))
	check(r.keysLeft == 0, "Redis holds no key of the fleet %v after the end (%d left; the last went after %v)",
		keysTTL, r.keysLeft, r.keysAt.Round(100*time.Millisecond))
	fmt.Printf("     Redis used_memory: %.2f MiB before the run, %.2f MiB once its keys expired\n",
		float64(r.memStart)/(1<<20), float64(r.memEnd)/(1<<20))
}
