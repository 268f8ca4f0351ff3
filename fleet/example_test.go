package fleet_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/fleet"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
)

// redisClient connects to HEADROOM_REDIS_URL, else the local server. A
// client must honour its contexts' deadlines (ContextTimeoutEnabled) for
// Options.Timeout to bound each call.
func redisClient() *redis.Client {
	url := os.Getenv("HEADROOM_REDIS_URL")
	if url == "" {
		url = "redis://127.0.0.1:6379/0"
	}
	o, err := redis.ParseURL(url)
	if err != nil {
		panic(err)
	}
	o.ContextTimeoutEnabled = true
	return redis.NewClient(o)
}

// examplePrefix keeps each run's keys apart; they expire by themselves.
func examplePrefix() string {
	var b [6]byte
	rand.Read(b[:])
	return "headroom-example-" + hex.EncodeToString(b[:])
}

// Every process that builds this limiter shares 2 calls a second: the
// bucket starts full, so two go at once and the third is refused with the
// time until the next permit, on the Redis server's clock.
func ExamplePerSecond() {
	c := redisClient()
	defer c.Close()
	lim, err := fleet.PerSecond(c, 2, 2, fleet.Options{Name: "api", Prefix: examplePrefix()})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	for i := range 3 {
		lease, err := lim.Acquire(ctx)
		var refused *limit.RateLimitedError
		if errors.As(err, &refused) {
			fmt.Printf("call %d: refused, retry within 500ms: %v\n", i+1, refused.RetryAfter <= 500*time.Millisecond)
			continue
		}
		fmt.Printf("call %d: granted\n", i+1)
		lease.Release()
	}
	// Output:
	// call 1: granted
	// call 2: granted
	// call 3: refused, retry within 500ms: true
}

// A sliding window of 100 calls a minute for the whole fleet, with a
// queue: a caller waits its turn, up to its deadline, instead of being
// refused; and if Redis cannot be reached, each process goes on with its
// share of the limit, 100 over the live instance count.
func ExamplePerWindow() {
	c := redisClient()
	defer c.Close()
	prefix := examplePrefix()
	instances, err := fleet.NewInstances(c, 15*time.Second, fleet.Options{Name: "workers", Prefix: prefix})
	if err != nil {
		panic(err)
	}
	defer instances.Close()
	lim, err := fleet.PerWindow(c, 100, time.Minute, fleet.Options{
		Name: "search", Prefix: prefix, QueueLimit: new(1000), FailOpen: true, Instances: instances,
	})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lease, err := lim.AcquireN(ctx, 5)
	if err != nil {
		panic(err)
	}
	defer lease.Release()
	fmt.Println("granted", lease.Cost())
	// Output:
	// granted 5
}

// The number of live processes, for an adaptive rate limiter's share: it
// heartbeats every ttl/3 and drops processes silent for a TTL.
func ExampleNewInstances() {
	c := redisClient()
	defer c.Close()
	instances, err := fleet.NewInstances(c, 15*time.Second, fleet.Options{Name: "workers", Prefix: examplePrefix()})
	if err != nil {
		panic(err)
	}
	defer instances.Close()
	lim, err := limit.AdaptiveRate(adaptive.RateConfig{InstanceCounter: instances})
	if err != nil {
		panic(err)
	}
	defer lim.Close()
	fmt.Println("processes:", instances.Instances())
	// Output:
	// processes: 1
}

// One process reads a response publishing 3 calls left of 100; another
// process, guarding the same key, sees it and reserves the one unit above
// the reserve (2 of 100); the next attempt, anywhere in the fleet, is held
// until the reset, or refused at once when its deadline comes first.
func ExampleNewSharedQuota() {
	c := redisClient()
	defer c.Close()
	prefix := examplePrefix()
	guard, err := quota.New(quota.Options{})
	if err != nil {
		panic(err)
	}
	here, err := fleet.NewSharedQuota(c, guard, fleet.Options{Name: "github", Prefix: prefix})
	if err != nil {
		panic(err)
	}
	there, _ := fleet.NewSharedQuota(c, nil, fleet.Options{Name: "github", Prefix: prefix})
	ctx := context.Background()
	h := http.Header{"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"3"}, "Ratelimit-Reset": {"60"}}
	if err := here.Observe(ctx, "api.github.com", quota.Response{Status: 200, Header: h}, time.Now()); err != nil {
		panic(err)
	}
	fmt.Println("there:", there.Acquire(ctx, "api.github.com", 1))
	short, cancel := context.WithTimeout(ctx, time.Second) // the reset is further: refused at once
	defer cancel()
	err = here.Acquire(short, "api.github.com", 1)
	fmt.Println("here: refused:", errors.Is(err, limit.ErrRateLimited))
	// Output:
	// there: <nil>
	// here: refused: true
}
