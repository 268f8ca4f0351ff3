package bench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/fleet"
	"github.com/headroom-go/headroom/limit"
)

// The shared limiters against go-redis/redis_rate v10, on one Redis, in one
// run: both are set to a million permits a second with a million of burst,
// so that none refuses and what is measured is the round trip of an
// acquire that may go. Each benchmark reports, beside ns/op:
//
//   - acquires/s: admitted acquires per second of the benchmark;
//   - cmds/acquire: commands the client sent per admitted acquire (a
//     redis.Hook counts them; 1 is one round trip each);
//   - p50-µs, p99-µs: the latency of one acquire.
//
// g=1 is one goroutine; g=64 is RunParallel with 64 goroutines whatever
// GOMAXPROCS is (SetParallelism). fleet-batch16 is fleet.PerSecond with
// Options.Batch 16.
//
// -count runs each sub-benchmark's rounds back to back, so that on a
// machine others load redis_rate's rounds and fleet's see different
// minutes; run rounds of every library in turn instead, and compare at one
// goroutine with BenchmarkRedisAcquirePaired, which alternates acquires:
//
//	cd bench && go test -c -o /tmp/bench.test . && for i in $(seq 10); do
//	/tmp/bench.test -test.run '^$' -test.bench 'RedisAcquire$' -test.benchmem -test.count 1; done |
//	tee fleet.txt && benchstat -col /lib fleet.txt
const redisRate = 1_000_000

// redisURL is the server: HEADROOM_REDIS_URL, or the local one.
func redisURL() string {
	if u := os.Getenv("HEADROOM_REDIS_URL"); u != "" {
		return u
	}
	return "redis://127.0.0.1:6379/0"
}

// benchRedis returns a client that counts its commands, and a key prefix of
// the benchmark's own, deleted when it ends. Without a server it skips,
// unless under CI.
func benchRedis(b *testing.B) (*redis.Client, *commandCount, string) {
	o, err := redis.ParseURL(redisURL())
	if err != nil {
		b.Fatal(err)
	}
	o.ContextTimeoutEnabled = true
	c := redis.NewClient(o)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := c.Ping(ctx).Err(); err != nil {
		c.Close()
		if os.Getenv("CI") == "true" {
			b.Fatalf("no Redis at %s: %v", o.Addr, err)
		}
		b.Skipf("no Redis at %s (%v); set HEADROOM_REDIS_URL to use another", o.Addr, err)
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	prefix := "headroom-bench:" + hex.EncodeToString(rnd[:])
	count := &commandCount{}
	c.AddHook(count)
	b.Cleanup(func() {
		bg := context.Background()
		iter := c.Scan(bg, 0, "*"+prefix+"*", 100).Iterator()
		for iter.Next(bg) {
			c.Del(bg, iter.Val())
		}
		c.Close()
	})
	return c, count, prefix
}

// commandCount counts the commands a client sends, but for those that set
// up a connection.
type commandCount struct{ n atomic.Int64 }

func (h *commandCount) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *commandCount) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if n := cmd.Name(); n != "hello" && n != "client" {
			h.n.Add(1)
		}
		return next(ctx, cmd)
	}
}
func (h *commandCount) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if n := cmd.Name(); n != "hello" && n != "client" {
				h.n.Add(1)
			}
		}
		return next(ctx, cmds)
	}
}

// redisPeers builds, per library, a func that acquires one permit and
// reports whether it was admitted.
var redisPeers = []struct {
	name string
	make func(b *testing.B, c *redis.Client, prefix string) func(ctx context.Context) bool
}{
	{"redis_rate", func(b *testing.B, c *redis.Client, prefix string) func(ctx context.Context) bool {
		lim := redis_rate.NewLimiter(c)
		l := redis_rate.Limit{Rate: redisRate, Burst: redisRate, Period: time.Second}
		key := prefix + ":redis_rate"
		return func(ctx context.Context) bool {
			r, err := lim.Allow(ctx, key, l)
			return err == nil && r.Allowed == 1
		}
	}},
	{"fleet", fleetPeer(0)},
	{"fleet-batch16", fleetPeer(16)},
}

func fleetPeer(batch int) func(b *testing.B, c *redis.Client, prefix string) func(ctx context.Context) bool {
	return func(b *testing.B, c *redis.Client, prefix string) func(ctx context.Context) bool {
		lim, err := fleet.PerSecond(c, redisRate, redisRate, fleet.Options{Name: "bench" + strconv.Itoa(batch), Prefix: prefix,
			Batch: batch, Timeout: 3 * time.Second}) // the client's own read timeout, as redis_rate has
		if err != nil {
			b.Fatal(err)
		}
		return func(ctx context.Context) bool {
			lease, err := lim.Acquire(ctx)
			lease.Release()
			return err == nil
		}
	}
}

func BenchmarkRedisAcquire(b *testing.B) {
	for _, g := range []int{1, 64} {
		for _, p := range redisPeers {
			b.Run("g="+strconv.Itoa(g)+"/lib="+p.name, func(b *testing.B) {
				c, count, prefix := benchRedis(b)
				acquire := p.make(b, c, prefix)
				ctx := context.Background()
				if !acquire(ctx) { // loads the script: not measured
					b.Fatal("refused")
				}
				count.n.Store(0)
				lat := measureAcquires(b, g, func() bool { return acquire(ctx) })
				if b.Failed() {
					return
				}
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acquires/s")
				b.ReportMetric(float64(count.n.Load())/float64(b.N), "cmds/acquire")
				slices.Sort(lat)
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
			})
		}
	}
}

// measureAcquires runs acquire b.N times from g goroutines and returns the
// latency of each.
func measureAcquires(b *testing.B, g int, acquire func() bool) []time.Duration {
	var mu sync.Mutex
	lat := make([]time.Duration, 0, b.N)
	run := func(next func() bool) {
		mine := make([]time.Duration, 0, 1024)
		for next() {
			start := time.Now()
			if !acquire() {
				b.Error("refused")
				return
			}
			mine = append(mine, time.Since(start))
		}
		mu.Lock()
		lat = append(lat, mine...)
		mu.Unlock()
	}
	b.ResetTimer()
	if g == 1 {
		n := 0
		run(func() bool { n++; return n <= b.N })
		return lat
	}
	b.SetParallelism(max(g/max(1, runtimeProcs()), 1))
	b.RunParallel(func(pb *testing.PB) { run(pb.Next) })
	return lat
}

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

// BenchmarkRedisBatch is the trade-off of batching at 4 and 64 goroutines:
// commands per admitted acquire against the bound on over-admission, which
// is Batch permits per process (docs/fleet.md).
//
// Run: cd bench && go test -run '^$' -bench RedisBatch -count 6 -benchtime 1s | tee batch.txt &&
// benchstat -col /batch batch.txt
func BenchmarkRedisBatch(b *testing.B) {
	for _, g := range []int{4, 64} {
		for _, batch := range []int{0, 2, 4, 8, 16, 64} {
			b.Run("g="+strconv.Itoa(g)+"/batch="+strconv.Itoa(batch), func(b *testing.B) {
				c, count, prefix := benchRedis(b)
				acquire := fleetPeer(batch)(b, c, prefix)
				ctx := context.Background()
				acquire(ctx)
				count.n.Store(0)
				measureAcquires(b, g, func() bool { return acquire(ctx) })
				b.ReportMetric(float64(count.n.Load())/float64(b.N), "cmds/acquire")
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "acquires/s")
			})
		}
	}
}

// BenchmarkRedisOneKey is what one Redis server sustains for the fleet's
// scripts on one key — one shard — at 1 to 64 connections: conns
// limiters of one limit, each with a client of one connection and one
// caller, so that every acquire is one command (EVALSHA of the token
// bucket's or the window's script) and the acquires a second are the
// commands a second. docs/fleet.md models from it how many processes one
// key serves.
//
// Run: cd bench && go test -run '^$' -bench RedisOneKey -count 6 -benchtime 2s | tee onekey.txt &&
// benchstat -col /conns onekey.txt
func BenchmarkRedisOneKey(b *testing.B) {
	for _, script := range []string{"gcra", "window"} {
		for _, conns := range []int{1, 2, 4, 8, 16, 32, 64} {
			b.Run("script="+script+"/conns="+strconv.Itoa(conns), func(b *testing.B) {
				c, _, prefix := benchRedis(b)
				o := c.Options()
				var next atomic.Int64
				var acquires []func() bool
				for range conns {
					oc := *o
					oc.PoolSize, oc.MinIdleConns = 1, 1
					cc := redis.NewClient(&oc)
					b.Cleanup(func() { cc.Close() })
					var lim limit.Limiter
					var err error
					fo := fleet.Options{Name: "onekey", Prefix: prefix, Timeout: 3 * time.Second}
					if script == "gcra" {
						lim, err = fleet.PerSecond(cc, redisRate, redisRate, fo)
					} else {
						lim, err = fleet.PerWindow(cc, 1_000_000_000, time.Second, fo)
					}
					if err != nil {
						b.Fatal(err)
					}
					acquires = append(acquires, func() bool { _, err := lim.Acquire(context.Background()); return err == nil })
				}
				for _, a := range acquires {
					a() // loads the script, dials the connection
				}
				b.SetParallelism(max(conns/runtimeProcs(), 1))
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					acquire := acquires[int(next.Add(1)-1)%conns]
					for pb.Next() {
						if !acquire() {
							b.Error("refused")
							return
						}
					}
				})
				b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
			})
		}
	}
}

// BenchmarkRedisWait is what WAIT would cost an acquire: on the master of
// the topologies' Sentinel setup (.ci/redis-topologies.sh, its env
// sourced), an acquire alone, and an acquire followed by WAIT 1 100 — the
// master holds the answer until its replica has the grant, which a
// failover then cannot forget. (WAIT may not run inside a script.)
//
// Run: . DIR/env && cd bench && go test -run '^$' -bench RedisWait -count 6 -benchtime 2s | tee wait.txt &&
// benchstat -col /wait wait.txt
func BenchmarkRedisWait(b *testing.B) {
	spec := os.Getenv("HEADROOM_REDIS_SENTINEL")
	if spec == "" {
		b.Skip("HEADROOM_REDIS_SENTINEL is not set: .ci/redis-topologies.sh start DIR && . DIR/env")
	}
	master, sentinels, _ := strings.Cut(spec, "@")
	redis.SetLogger(quiet{}) // the Sentinel client's notes would break the benchmark's lines
	for _, wait := range []bool{false, true} {
		b.Run("wait="+strconv.FormatBool(wait), func(b *testing.B) {
			c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: master, SentinelAddrs: strings.Split(sentinels, ","),
				ContextTimeoutEnabled: true})
			defer c.Close()
			lim, err := fleet.PerSecond(c, redisRate, redisRate, fleet.Options{Name: "wait", Prefix: "headroom-bench-wait", Timeout: 3 * time.Second})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			lim.Acquire(ctx)
			lat := measureAcquires(b, 1, func() bool {
				_, err := lim.Acquire(ctx)
				if err == nil && wait {
					err = c.Wait(ctx, 1, 100*time.Millisecond).Err()
				}
				return err == nil
			})
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds()), "p50-µs")
			b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds()), "p99-µs")
		})
	}
}

// quiet is a go-redis logger that says nothing.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}
