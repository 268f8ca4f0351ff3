package fleet

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// shardedBucket spreads a limit over shards, one key each, each with its
// own hash tag. A process of rank r among n draws from shard r mod
// shards, which holds the share of the limit of the processes placed on
// it: m of n, where m is how many ranks below n fall on it. So the shards
// add up to the limit whatever n is, and every process, wherever placed,
// has its share. When n changes the shares change with it, at each
// process's next heartbeat.
type shardedBucket struct {
	shards []*scriptBucket
	inst   *Instances
	// params gives a shard's arguments and the longest wait it can give
	// for a share of m in n of the limit.
	params func(m, n int) (args []any, maxWait time.Duration)
	placed []placement // what each shard's arguments were made for
}

type placement struct{ m, n int }

// shardKey is the key of kind of shard i: the limit's name and the shard's
// number make its hash tag.
func (o *Options) shardKey(kind string, i int) string {
	return "{" + o.Prefix + ":" + o.Name + "/" + strconv.Itoa(i) + "}:" + kind
}

func newShardedBucket(call *caller, o Options, script *redis.Script, kind, op string,
	params func(m, n int) ([]any, time.Duration)) *shardedBucket {
	b := &shardedBucket{inst: o.Instances.(*Instances), params: params, placed: make([]placement, o.Shards)}
	for i := range o.Shards {
		args, maxWait := params(1, o.Shards)
		b.shards = append(b.shards, newScriptBucket(call, script, o.shardKey(kind, i), op, maxWait, args...))
		b.placed[i] = placement{1, o.Shards}
	}
	return b
}

// onShard is how many of n ranks fall on shard s of shards: s, s + shards,
// s + 2 × shards, … below n.
func onShard(s, n, shards int) int {
	if s >= n {
		return 0
	}
	return (n-1-s)/shards + 1
}

func (b *shardedBucket) take(ctx context.Context, need, want int) (grant, error) {
	n, rank := b.inst.rank()
	s := rank % len(b.shards)
	p := placement{onShard(s, n, len(b.shards)), n}
	sb := b.shards[s]
	if b.placed[s] != p {
		args, maxWait := b.params(p.m, p.n)
		copy(sb.args, args)
		sb.maxWait = maxWait
		b.placed[s] = p
	}
	return sb.take(ctx, need, want)
}
