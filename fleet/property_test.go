package fleet

import (
	"context"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom/limit"
)

// An admission: when a lease was granted and for how many permits.
type admission struct {
	at   time.Time
	cost int
}

// maxInSpan is the most permits admitted in any closed span of length d.
func maxInSpan(adm []admission, d time.Duration) int {
	slices.SortFunc(adm, func(a, b admission) int { return a.at.Compare(b.at) })
	most, sum, j := 0, 0, 0
	for i := range adm {
		for ; j < len(adm) && !adm[j].at.After(adm[i].at.Add(d)); j++ {
			sum += adm[j].cost
		}
		most = max(most, sum)
		sum -= adm[i].cost
	}
	return most
}

// batchBound is how many permits one process may hand out in a span beyond
// what Redis granted in it (docs/fleet.md): those of its one round trip in
// flight and its pocket, at most max(batch, callers × cmax) + cmax − 1.
func batchBound(batch, callers, cmax int) int {
	return max(batch, callers*cmax) + cmax - 1
}

// recorder collects the admissions of concurrent callers.
type recorder struct {
	mu  sync.Mutex
	adm []admission
}

func (r *recorder) add(l *limiter, lease limit.Lease) {
	r.mu.Lock()
	r.adm = append(r.adm, admission{at: l.epoch.Add(lease.Granted()), cost: lease.Cost()})
	r.mu.Unlock()
}

// Over any span d, the permits admitted across processes stay within what
// the token bucket allows — burst + d × rate — plus each process's batching
// bound: whatever the rate, burst, latency, costs, batch sizes, queues and
// number of callers.
func TestPropertyAdmittedWithinLimitPlusBatchBound(t *testing.T) {
	for seed := range 16 {
		synctest.Test(t, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 7))
			b := &fakeBucket{
				interval: time.Duration(100+rng.IntN(900)) * time.Microsecond,
				burst:    1 + rng.IntN(30),
				rtt:      time.Duration(50+rng.IntN(2000)) * time.Microsecond,
			}
			cmax := 1 + rng.IntN(min(3, b.burst))
			procs := 2 + rng.IntN(3)
			bound := 0
			var rec recorder
			var wg sync.WaitGroup
			start := time.Now()
			for range procs {
				batch := []int{0, 1, 4, 16}[rng.IntN(4)]
				callers := 1 + rng.IntN(12)
				bound += batchBound(batch, callers, cmax)
				l := fakeLimiter(b, b.burst, Options{Name: "p", Batch: batch, QueueLimit: new(rng.IntN(2) * 20)})
				for range callers {
					r := rand.New(rand.NewPCG(rng.Uint64(), 1))
					wg.Go(func() { callLoop(l, r, cmax, start.Add(time.Second), &rec) })
				}
			}
			wg.Wait()
			if len(rec.adm) == 0 {
				t.Fatal("nothing admitted")
			}
			for _, d := range []time.Duration{0, b.interval, 10 * time.Millisecond, 100 * time.Millisecond, time.Second} {
				allowed := b.burst + int(d/b.interval) + bound
				got := maxInSpan(rec.adm, d)
				if got > allowed {
					t.Errorf("seed %d: %d permits in a span of %v, over the bound %d (burst %d + %d + batching %d)",
						seed, got, d, allowed, b.burst, int(d/b.interval), bound)
				}
			}
		})
	}
}

// callLoop acquires random costs with random pauses until end, each with
// a deadline of 20ms, recording what it was granted.
func callLoop(l *limiter, r *rand.Rand, cmax int, end time.Time, rec *recorder) {
	for time.Now().Before(end) {
		time.Sleep(time.Duration(r.ExpFloat64() * float64(time.Millisecond)))
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		lease, err := l.AcquireN(ctx, 1+r.IntN(cmax))
		cancel()
		if err == nil {
			rec.add(l, lease)
			lease.Release()
		}
	}
}
