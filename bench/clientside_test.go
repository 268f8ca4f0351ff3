package bench

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkRedisClientSide is the client's own work per acquire: each
// library with a client whose every script call a hook answers at once,
// as Redis would for a grant, so that what is timed is the library and
// go-redis's building of the command, without the network, the server or
// the scheduling around them, which the machine's load makes noisy. (The
// hook answers fleet's script with a bare 1, redis_rate's with {1, burst -
// 1, "-1", "0.000001"}: what each answers for one permit granted.)
//
// Run: cd bench && go test -run '^$' -bench RedisClientSide -benchmem -count 10 | tee cs.txt &&
// benchstat -col /lib cs.txt
func BenchmarkRedisClientSide(b *testing.B) {
	for _, p := range redisPeers[:2] {
		b.Run("lib="+p.name, func(b *testing.B) {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:0", ContextTimeoutEnabled: true})
			defer c.Close()
			c.AddHook(answerScripts{})
			acquire := p.make(b, c, "headroom-bench-clientside")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if !acquire(ctx) {
					b.Fatal("refused")
				}
			}
		})
	}
}

// answerScripts is a go-redis hook that answers EVALSHA as a granting
// Redis would, and lets no command reach the network.
type answerScripts struct{}

func (answerScripts) DialHook(next redis.DialHook) redis.DialHook { return next }

func (answerScripts) ProcessHook(redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		c, ok := cmd.(*redis.Cmd)
		if !ok || cmd.Name() != "evalsha" {
			cmd.SetErr(redis.ErrClosed)
			return redis.ErrClosed
		}
		if key, _ := cmd.Args()[3].(string); !strings.HasPrefix(key, "rate:") { // redis_rate's prefix
			c.SetVal(int64(1))
			return nil
		}
		c.SetVal([]any{int64(1), int64(redisRate - 1), "-1", strconv.FormatFloat(1e-6, 'g', -1, 64)})
		return nil
	}
}

func (answerScripts) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}
