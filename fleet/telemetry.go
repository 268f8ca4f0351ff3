package fleet

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/internal/metrics"
)

// usage reads how much of a shared limit is spent, from its keys on
// Redis, for the in_use and available gauges every limiter reports. It
// reads what the scripts would: the bucket's theoretical arrival time or
// the window's segments, and the server's clock, in one round trip that
// writes nothing. It holds no reference to its limiter, whose recorder
// keeps it (see metrics.Limiter.Sample).
type usage struct {
	client  redis.UniversalClient
	timeout time.Duration
	circuit *circuit
	window  bool // the keys are windowScript's hashes, else gcraScript's TATs
	keys    []string
	inst    *Instances // with shards: who is placed where
	params  func(m, n int) ([]any, time.Duration)
}

// sampleUsage has grants report the shared limit's in_use and available
// each time the meter collects: the whole limit's, all processes and
// shards together, on Redis's clock. A collection while the circuit is
// open, or whose read fails or takes longer than the limit's Timeout,
// reports neither: a gauge that Redis cannot vouch for is left out, not
// guessed.
func sampleUsage(grants *metrics.Limiter, c redis.UniversalClient, o Options, keyKind string, cut *circuit,
	params func(m, n int) ([]any, time.Duration)) {
	u := &usage{client: c, timeout: o.Timeout, circuit: cut, window: keyKind == "window", params: params}
	if o.Shards > 1 {
		u.inst = o.Instances.(*Instances)
		for i := range o.Shards {
			u.keys = append(u.keys, o.shardKey(keyKind, i))
		}
	} else {
		u.keys = []string{o.key(keyKind)}
	}
	grants.Sample(func(f metrics.Figures) {
		if inUse, available, ok := u.read(); ok {
			f.Set(metrics.InUse, inUse)
			f.Set(metrics.Available, available)
		}
	})
}

// read is the permits spent and free now, over every key that holds a
// share of the limit.
func (u *usage) read() (inUse, available float64, ok bool) {
	if u.circuit.blocked() {
		return 0, 0, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), u.timeout)
	defer cancel()
	pipe := u.client.Pipeline()
	clock := pipe.Time(ctx)
	state := make([]redis.Cmder, len(u.keys))
	for i, k := range u.keys {
		if u.window {
			state[i] = pipe.HGetAll(ctx, k)
		} else {
			state[i] = pipe.Get(ctx, k)
		}
	}
	if _, err := pipe.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
		return 0, 0, false
	}
	t, err := clock.Result()
	if err != nil {
		return 0, 0, false
	}
	now := float64(t.Unix()-scriptsEpoch)*1e6 + float64(t.Nanosecond()/1000)
	n := len(u.keys)
	if u.inst != nil {
		n, _ = u.inst.rank()
	}
	for i, cmd := range state {
		m := 1
		if u.inst != nil {
			if m = onShard(i, n, len(u.keys)); m == 0 {
				continue // no process draws from this shard
			}
		}
		args, _ := u.params(m, max(n, 1))
		var spent, capacity float64
		if u.window {
			spent, capacity = windowSpent(cmd.(*redis.MapStringStringCmd).Val(), args, now)
		} else {
			spent, capacity = bucketSpent(cmd.(*redis.StringCmd).Val(), args, now)
		}
		inUse += spent
		available += capacity - spent
	}
	return inUse, available, true
}

// scriptsEpoch is the scripts' zero, in Unix seconds (scriptClock).
const scriptsEpoch = 1700000000

// bucketSpent is what gcraScript would find of a bucket of
// args (emission interval in µs, burst) whose key holds tat, at now: the
// permits spent within the burst, and the burst. No key is a full bucket.
func bucketSpent(tat string, args []any, now float64) (spent, capacity float64) {
	interval, burst := toFloat(args[0]), toFloat(args[1])
	t, err := strconv.ParseFloat(tat, 64)
	if err != nil || math.IsNaN(t) || t < now {
		t = now
	}
	free := math.Floor((now-t)/interval + burst + 1e-9)
	return burst - min(max(free, 0), burst), burst
}

// windowSpent is what windowScript would count in a window of args
// (window in µs, segment in µs, limit) whose hash is h, at now: the
// permits granted in segments whose last grant is within the window, and
// the limit. A count the script would repair counts as it would: the
// limit.
func windowSpent(h map[string]string, args []any, now float64) (spent, capacity float64) {
	window, limit := toFloat(args[0]), toFloat(args[2])
	for field, v := range h {
		seg, ok := strings.CutPrefix(field, "c")
		if !ok {
			continue
		}
		last, err := strconv.ParseFloat(h["l"+seg], 64)
		if err != nil || math.IsNaN(last) || last > now {
			last = now
		}
		if last+window <= now {
			continue
		}
		c, err := strconv.ParseFloat(v, 64)
		if err != nil || c < 1 || c > limit || c != math.Floor(c) {
			c = limit
		}
		spent += c
	}
	return min(spent, limit), limit
}

// toFloat is a script argument as a number.
func toFloat(v any) float64 {
	switch v := v.(type) {
	case int:
		return float64(v)
	case int64:
		return float64(v)
	case float64:
		return v
	}
	return math.NaN()
}
