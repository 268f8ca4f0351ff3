package fleet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// testRedis returns a client of the test server and a key prefix of the
// test's own; the keys under it are deleted when the test ends. It skips
// the test when there is no server (TestMain has said why, once, and fails
// the run instead under CI).
func testRedis(t testing.TB) (*redis.Client, string) {
	t.Helper()
	if noRedis != "" {
		t.Skip("no Redis")
	}
	o, err := redis.ParseURL(redisURL())
	if err != nil {
		t.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	c := redis.NewClient(o)
	prefix := testPrefix()
	t.Cleanup(func() {
		deleteKeys(t, c, prefix)
		c.Close()
	})
	return c, prefix
}

// testPrefix is a key prefix no other test run uses.
func testPrefix() string {
	var b [6]byte
	rand.Read(b[:])
	return "headroom-test:" + hex.EncodeToString(b[:])
}

// deleteKeys deletes every key under prefix.
func deleteKeys(t testing.TB, c redis.UniversalClient, prefix string) {
	ctx := context.Background()
	iter := c.Scan(ctx, 0, "{"+prefix+"*", 100).Iterator()
	for iter.Next(ctx) {
		c.Del(ctx, iter.Val())
	}
	if err := iter.Err(); err != nil {
		t.Logf("cleaning %s: %v", prefix, err)
	}
}

// countingHook counts the commands a client sends, a pipeline's each,
// but for those that set up a new connection (HELLO, CLIENT SETINFO).
type countingHook struct{ n atomic.Int64 }

func counted(cmd redis.Cmder) bool { n := cmd.Name(); return n != "hello" && n != "client" }

func (h *countingHook) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *countingHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if counted(cmd) {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *countingHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if counted(c) {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// eventually waits until cond holds, for at most within, and returns how
// long it took. Redis decides by its own clock, which no test can fake, so
// what depends on its TTLs is waited for in real time, asking every
// millisecond.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("%s: not within %v", what, within)
		}
		<-tick.C
	}
	return time.Since(start)
}
