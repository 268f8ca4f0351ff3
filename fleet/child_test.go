package fleet

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/limit"
)

// childEnv marks the test binary run as one process of a fleet by
// TestFourProcesses*: TestMain then runs runChild instead of the tests.
const childEnv = "HEADROOM_FLEET_CHILD"

// childTTL is the heartbeat TTL of the fleet's instance count.
const childTTL = 600 * time.Millisecond

// childResult is what a child reports on its last line: how its acquires
// ended and what the server said to the calls it sent.
type childResult struct {
	Granted     int // leases
	Throttled   int // *limit.RateLimitedError
	Unavailable int // *UnavailableError
	Lost        int // anything else: must stay 0
	Accepted    int // 2xx from the server
	Rejected    int // 429 from the server
	SendErrors  int // the call to the server failed
}

// runChild runs one process of the fleet, configured by the environment:
// the Redis address and key prefix, the server, the rate and burst of the
// shared limit, how long to run, and the failure policy. Eight callers
// acquire and send until the time is up.
func runChild() int {
	env := func(k string) string { return os.Getenv("HEADROOM_FLEET_" + k) }
	rate, _ := strconv.ParseFloat(env("RATE"), 64)
	burst, _ := strconv.Atoi(env("BURST"))
	run, _ := time.ParseDuration(env("RUN"))
	c := childClient(env("REDIS"))
	defer c.Close()
	o := Options{Name: "child", Prefix: env("PREFIX"), Timeout: 100 * time.Millisecond}
	inst, err := NewInstances(c, childTTL, o)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer inst.Close()
	o.QueueLimit, o.FailOpen, o.Instances = new(100), env("FAILOPEN") == "1", inst
	var lim limit.Limiter
	if env("SHAPE") == "window" {
		// A tenth of the quota in any 100 ms holds any second to the quota
		// on Redis's clock, in bursts small enough for the quota's own
		// window. A segment's permits free one window after their last
		// grant and are taken again a wake-up and a round trip later, so
		// each cycle of the window runs 2 to 4 ms longer: the window runs at
		// 96 to 98% of the quota, not at the token bucket's 97.5% margin,
		// and the spread from grant to arrival stays within the 1% over
		// that the goal allows. Segments of 1 ms keep the freeing close to
		// the granting.
		o.Segments = 100
		lim, err = PerWindow(c, multiQuota/10, 100*time.Millisecond, o)
	} else {
		lim, err = PerSecond(c, rate, burst, o)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	callers := 8
	if n, err := strconv.Atoi(env("CALLERS")); err == nil {
		callers = n
	}
	var res childResult
	var mu sync.Mutex
	var wg sync.WaitGroup
	end := time.Now().Add(run)
	for range callers {
		wg.Go(func() {
			for time.Now().Before(end) {
				r := callOnce(lim, env("SERVER"))
				mu.Lock()
				res.add(r)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b, _ := json.Marshal(res)
	fmt.Println(string(b))
	return 0
}

// childClient is the client of spec: a server's address, "cluster:" and the
// Cluster's nodes, or "sentinel:" and master@sentinels.
func childClient(spec string) redis.UniversalClient {
	kind, addrs, _ := strings.Cut(spec, ":")
	switch kind {
	case "cluster":
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: strings.Split(addrs, ","),
			ContextTimeoutEnabled: true, DialTimeout: 100 * time.Millisecond})
	case "sentinel":
		master, sentinels, _ := strings.Cut(addrs, "@")
		return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: strings.Split(sentinels, ","),
			ContextTimeoutEnabled: true, DialTimeout: 100 * time.Millisecond})
	}
	return redis.NewClient(&redis.Options{Addr: spec, ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond})
}

// callOnce acquires a permit within 200ms and, granted, calls the server.
func callOnce(lim limit.Limiter, server string) childResult {
	var r childResult
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	lease, err := lim.Acquire(ctx)
	var rl *limit.RateLimitedError
	switch {
	case err == nil:
		r.Granted++
	case errors.As(err, &rl):
		r.Throttled++
		time.Sleep(min(rl.RetryAfter, 10*time.Millisecond)) // a caller's pause, not a test's wait
		return r
	case errors.Is(err, ErrUnavailable):
		r.Unavailable++
		time.Sleep(10 * time.Millisecond) // a caller backing off while Redis is away, not a test waiting
		return r
	default:
		r.Lost++
		return r
	}
	defer lease.Release()
	resp, err := http.Get(server)
	if err != nil {
		r.SendErrors++
		return r
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		r.Rejected++
	} else {
		r.Accepted++
	}
	return r
}

func (r *childResult) add(o childResult) {
	r.Granted += o.Granted
	r.Throttled += o.Throttled
	r.Unavailable += o.Unavailable
	r.Lost += o.Lost
	r.Accepted += o.Accepted
	r.Rejected += o.Rejected
	r.SendErrors += o.SendErrors
}
