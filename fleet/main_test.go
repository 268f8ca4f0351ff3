package fleet

import (
	"context"
	"flag"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// redisURL is the server the tests use: HEADROOM_REDIS_URL, or the local
// one every machine of the project runs.
func redisURL() string {
	if u := os.Getenv("HEADROOM_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// noRedis says why the tests that need Redis skip; empty when it answers.
var noRedis string

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	noRedis = pingRedis()
	if noRedis != "" {
		if ciRun() {
			fmt.Fprintln(os.Stderr, "fleet: under CI a test that needs Redis may not skip: "+noRedis)
			os.Exit(1)
		}
		fmt.Fprintln(os.Stderr, "fleet: skipping the tests that need Redis: "+noRedis)
		// The examples talk to Redis too, and cannot skip themselves.
		flag.Parse()
		flag.Set("test.skip", "^Example")
	}
	if why := noTopology(); why != "" {
		fmt.Fprintln(os.Stderr, "fleet: skipping the Cluster and Sentinel tests: "+why)
	}
	goleak.VerifyTestMain(m)
}

// pingRedis returns "" when the test server answers, else why not.
func pingRedis() string {
	o, err := redis.ParseURL(redisURL())
	if err != nil {
		return fmt.Sprintf("HEADROOM_REDIS_URL %q: %v", redisURL(), err)
	}
	c := redis.NewClient(o)
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		return fmt.Sprintf("no Redis at %s (%v); set HEADROOM_REDIS_URL to use another", o.Addr, err)
	}
	return ""
}

func getenv(k string) string { return os.Getenv(k) }
