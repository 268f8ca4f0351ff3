package limit

import (
	"context"
	"os"
	"slices"
	"sync"
	"testing"
	"time"
)

// TestPerSecondWaitAccuracy measures waiting in real time, so it runs only
// when asked: HEADROOM_WAIT_ACCURACY=1 go test ./limit -run WaitAccuracy -v.
// PerSecond(1000, 1) serves 4 goroutines that wait for every
// permit for 2 s; it must achieve at least 99.9% of the rate. It reports the
// p50/p99 lateness of the waiters (when they resumed minus when their permit
// fell due) beside that of a loop paced by plain time.Sleep at the same
// rate, run beside them for the same 2 s.
func TestPerSecondWaitAccuracy(t *testing.T) {
	if os.Getenv("HEADROOM_WAIT_ACCURACY") == "" {
		t.Skip("real-time measurement; set HEADROOM_WAIT_ACCURACY=1 to run it")
	}
	const rate, run, goroutines = 1000, 2 * time.Second, 4
	l, err := PerSecond(rate, 1, WithQueueLimit(goroutines))
	if err != nil {
		t.Fatal(err)
	}
	ps := l.(*perSecond)
	ctx := context.Background()
	var mu sync.Mutex
	var late []time.Duration // per grant: resumed minus due (Granted)
	start := time.Since(ps.epoch)
	var wg sync.WaitGroup
	var sleep []time.Duration
	wg.Go(func() { sleep = sleepLateness(run, time.Millisecond) }) // beside, for fairness
	for range goroutines {
		wg.Go(func() {
			for {
				lease, err := l.Acquire(ctx)
				resumed := time.Since(ps.epoch)
				if err != nil {
					t.Error(err)
					return
				}
				if lease.Granted()-start > run {
					return
				}
				mu.Lock()
				late = append(late, resumed-lease.Granted())
				mu.Unlock()
			}
		})
	}
	wg.Wait()

	achieved := float64(len(late)) / (rate*run.Seconds() + 1)
	t.Logf("PerSecond(%d, 1), %d waiting goroutines, %v: %d permits, %.4f of the rate", rate, goroutines, run, len(late), achieved)
	t.Logf("lateness of grants:      p50 %v  p99 %v  max %v", pct(late, 50), pct(late, 99), pct(late, 100))
	t.Logf("lateness of time.Sleep:  p50 %v  p99 %v  max %v", pct(sleep, 50), pct(sleep, 99), pct(sleep, 100))
	if achieved < 0.999 {
		t.Errorf("achieved %.4f of the configured rate, want at least 0.999", achieved)
	}
}

// sleepLateness paces a loop with plain time.Sleep: it sleeps until each
// deadline start+k·d in turn, for run, and returns how late it woke for
// each. Deadlines at arbitrary times, not at d after the last wake, are
// what waiters for permits have, and so the fair comparison: on a machine
// whose timers fire on a coarse tick, a deadline's phase against the tick
// decides most of the lateness.
func sleepLateness(run, d time.Duration) []time.Duration {
	var late []time.Duration
	start := time.Now()
	for k := 1; time.Since(start) < run; k++ {
		deadline := start.Add(time.Duration(k) * d)
		time.Sleep(time.Until(deadline))
		l := time.Since(deadline)
		late = append(late, l)
		k += int(l / d) // skip the deadlines already missed
	}
	return late
}

// pct is the p-th percentile of ds (100 is the maximum); it sorts ds.
func pct(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	slices.Sort(ds)
	return ds[min(len(ds)*p/100, len(ds)-1)]
}
