package main

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/fleet"
	"github.com/headroom-go/headroom/limit"
)

// spec is one of the four limits every worker shares with the others.
type spec struct {
	Name     string
	Window   time.Duration // 0: PerSecond
	Rate     float64       // PerSecond: permits a second
	Permits  int           // PerSecond: the burst; PerWindow: permits a window
	Segments int
	Batch    int
	FailOpen bool
	MaxCost  int // costs are drawn from 1 to MaxCost
}

var specs = []spec{
	{Name: "a", Rate: 200, Permits: 20, MaxCost: 3},
	{Name: "b", Rate: 1000, Permits: 100, Batch: 8, FailOpen: true, MaxCost: 5},
	{Name: "c", Window: time.Second, Permits: 300, Segments: 10, MaxCost: 4},
	{Name: "d", Window: 10 * time.Second, Permits: 2000, Segments: 20, FailOpen: true, MaxCost: 10},
}

const (
	callers      = 4                      // a worker's goroutines per limiter
	callDeadline = 250 * time.Millisecond // each acquire's
	instanceTTL  = 3 * time.Second
)

// workerReport is what a worker prints when its time is up.
type workerReport struct {
	Admitted        map[string]map[int64]int // per limiter, permits per Unix second
	Latency         []int64                  // acquires per latencyBucket
	Granted         int
	Refused         int
	Unavailable     int
	Lost            int      // neither a lease nor a typed error
	LostErrors      []string // the first few of them
	Late            int      // ended more than lateSlack past the deadline
	GoroutinesStart int
	GoroutinesEnd   int
	Heap            []uint64 // HeapAlloc every heapEvery
}

const (
	lateSlack = 250 * time.Millisecond
	heapEvery = 5 * time.Second
)

// latencyBucket is the bucket of a latency: bucket i holds [1.1^i, 1.1^(i+1)) µs.
func latencyBucket(d time.Duration) int {
	us := max(float64(d.Microseconds()), 1)
	return min(int(math.Log(us)/math.Log(1.1)), latencyBuckets-1)
}

const latencyBuckets = 200 // up to 1.1^200 µs, three minutes

// runWorker is one process of the fleet: four limiters on the soak's
// Sentinel-managed Redis, callers goroutines each, for duration.
func runWorker(duration time.Duration) error {
	r := &workerReport{Admitted: map[string]map[int64]int{}, Latency: make([]int64, latencyBuckets),
		GoroutinesStart: runtime.NumGoroutine()}
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: masterName,
		SentinelAddrs: strings.Split(os.Getenv("SOAK_SENTINELS"), ","), ContextTimeoutEnabled: true,
		DialTimeout: 100 * time.Millisecond})
	prefix := os.Getenv("SOAK_PREFIX")
	var closers []func() error
	var lims []limit.Limiter
	for _, s := range specs {
		inst, err := fleet.NewInstances(c, instanceTTL, fleet.Options{Name: s.Name, Prefix: prefix})
		if err != nil {
			return err
		}
		closers = append(closers, inst.Close)
		lim, err := s.build(c, fleet.Options{Name: s.Name, Prefix: prefix, QueueLimit: new(100), Batch: s.Batch,
			FailOpen: s.FailOpen, Instances: inst, Segments: s.Segments})
		if err != nil {
			return err
		}
		lims = append(lims, lim)
		r.Admitted[s.Name] = map[int64]int{}
	}
	r.drive(lims, duration)
	for _, close := range closers {
		close()
	}
	c.Close()
	// What the client and the counters ran ends with them; give the
	// runtime a moment to reap it before counting.
	waitFor(2*time.Second, func() bool { return runtime.NumGoroutine() <= r.GoroutinesStart })
	r.GoroutinesEnd = runtime.NumGoroutine()
	return json.NewEncoder(os.Stdout).Encode(r)
}

func (s spec) build(c redis.UniversalClient, o fleet.Options) (limit.Limiter, error) {
	if s.Window == 0 {
		return fleet.PerSecond(c, s.Rate, s.Permits, o)
	}
	return fleet.PerWindow(c, s.Permits, s.Window, o)
}

// drive runs the callers until duration has passed, sampling the heap.
func (r *workerReport) drive(lims []limit.Limiter, duration time.Duration) {
	end := time.Now().Add(duration)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, lim := range lims {
		for range callers {
			wg.Go(func() {
				for time.Now().Before(end) {
					pause(r.call(&mu, specs[i], lim))
				}
			})
		}
	}
	tick := time.NewTicker(heapEvery)
	defer tick.Stop()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for {
		select {
		case <-tick.C:
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			mu.Lock()
			r.Heap = append(r.Heap, m.HeapAlloc)
			mu.Unlock()
		case <-done:
			return
		}
	}
}

// call makes one acquire of a random cost and notes how it ended.
func (r *workerReport) call(mu *sync.Mutex, s spec, lim limit.Limiter) error {
	cost := 1 + rand.IntN(s.MaxCost)
	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	start := time.Now()
	lease, err := lim.AcquireN(ctx, cost)
	took := time.Since(start)
	var rl *limit.RateLimitedError
	mu.Lock()
	defer mu.Unlock()
	r.Latency[latencyBucket(took)]++
	if took > callDeadline+lateSlack {
		r.Late++
	}
	switch {
	case err == nil:
		r.Granted++
		r.Admitted[s.Name][time.Now().Unix()] += cost
		lease.Release()
	case errors.As(err, &rl):
		r.Refused++
	case errors.Is(err, fleet.ErrUnavailable):
		r.Unavailable++
	default:
		r.Lost++
		if len(r.LostErrors) < 5 {
			r.LostErrors = append(r.LostErrors, err.Error())
		}
	}
	return err
}

// pause is a caller's after a refusal (its RetryAfter, at most 20 ms) or
// while Redis is away (20 ms).
func pause(err error) {
	if err == nil {
		return
	}
	d := 20 * time.Millisecond
	var rl *limit.RateLimitedError
	if errors.As(err, &rl) {
		d = min(max(rl.RetryAfter, time.Millisecond), d)
	}
	time.Sleep(d)
}
