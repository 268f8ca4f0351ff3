package fleet

import (
	"math"
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit"
)

// PerSecond returns a token bucket of permitsPerSecond holding burst
// permits (0 means 1, as limit.PerSecond's), shared by every process that builds it with the same
// Prefix and Name on the same Redis (a single node, Sentinel or Cluster).
// The bucket starts full. It is the generic cell rate algorithm, run in one
// Lua script on the Redis server's clock: one round trip per acquire, an
// exact RetryAfter, and a key that expires once the bucket is full again.
// Over any span of d seconds it grants at most burst + d × permitsPerSecond
// permits (plus the batching bound, docs/fleet.md). The rate is at most
// 1e6 a second.
//
// It returns every problem with the settings at once, each a
// *headroom.ConfigError.
func PerSecond(c redis.UniversalClient, permitsPerSecond float64, burst int, o Options) (limit.Limiter, error) {
	if err := o.problems(func(l *problems.List) {
		checkRate(l, permitsPerSecond, burst)
		checkClient(l, c)
		o.checkShards(l, "burst", max(burst, 1))
	}); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	burst = max(burst, 1)
	// params are a bucket's arguments for a share of m in n of the limit.
	params := func(m, n int) ([]any, time.Duration) {
		rate := permitsPerSecond * float64(m) / float64(n)
		b := max(burst*m/n, 1)
		interval := float64(time.Second/time.Microsecond) / rate
		return []any{interval, b}, time.Duration(math.Ceil(float64(b)*interval)) * time.Microsecond
	}
	l := newLimiter(c, o, burst, metrics.KindPerSecond, permitsPerSecond*60, metrics.OpTokenBucket, gcraScript, "bucket", params)
	l.share.build = func(n int) (limit.Limiter, error) {
		return limit.New(limit.Options{
			PermitsPerSecond: permitsPerSecond / float64(n), Burst: max(burst/n, 1),
			QueueLimit: o.QueueLimit, Name: o.Name, MeterProvider: o.MeterProvider,
			Attributes: []attribute.KeyValue{shareAttribute},
		})
	}
	return l, nil
}

// newLimiter builds the shared limiter of capacity permits, a limiter of
// kind granting perMinute permits a minute, running script on its key of
// kind with the arguments params gives for the whole limit (1 in 1), or,
// with Shards, on each shard's key with those of its share. Its in_use and
// available are read from those keys when the meter collects.
func newLimiter(c redis.UniversalClient, o Options, capacity int, kind string, perMinute float64,
	op string, script *redis.Script, keyKind string, params func(m, n int) ([]any, time.Duration)) *limiter {
	m := metrics.NewFleet(o.MeterProvider, o.Name)
	m.Log(o.Logger)
	call := newCaller(c, o, m)
	var l *limiter
	if o.Shards > 1 {
		l = assemble(o, max(capacity/(2*o.Shards), 1), kind, perMinute,
			newShardedBucket(call, o, script, keyKind, op, params), m)
	} else {
		args, maxWait := params(1, 1)
		l = assemble(o, capacity, kind, perMinute, newScriptBucket(call, script, o.key(keyKind), op, maxWait, args...), m)
	}
	sampleUsage(l.grants, c, o, keyKind, l.circuit, params)
	return l
}

// newCaller makes o's calls to c, recorded in m.
func newCaller(c redis.UniversalClient, o Options, m *metrics.Fleet) *caller {
	return &caller{client: c, timeout: o.Timeout, metrics: m, node: newNodeOf(c)}
}

// assemble is a shared limiter on b with its instruments.
func assemble(o Options, capacity int, kind string, perMinute float64, b bucket, m *metrics.Fleet) *limiter {
	grants := metrics.NewLimiter(o.MeterProvider, o.Name, kind)
	grants.SetLimit(perMinute)
	grants.SetQueueLimit(o.queueLimit())
	l := &limiter{
		name:       o.Name,
		capacity:   capacity,
		bucket:     b,
		batch:      o.Batch,
		queueLimit: o.queueLimit(),
		circuit:    newCircuit(),
		failOpen:   o.FailOpen,
		share:      &share{counter: o.Instances},
		metrics:    m,
		grants:     grants,
		epoch:      time.Now(),
	}
	l.q.metrics = grants
	grants.CloseWhenUnreachable(l)
	return l
}
