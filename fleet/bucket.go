package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/redis/go-redis/v9"
)

// A bucket is where a shared limiter's permits come from: a script on Redis,
// or in tests an engine on the test's clock.
type bucket interface {
	// take asks for between need and want permits in one round trip.
	take(ctx context.Context, need, want int) (grant, error)
}

// A grant is what one round trip answered.
type grant struct {
	n          int           // permits granted; 0 when refused
	retryAfter time.Duration // when refused: until need permits are free
	at         time.Duration // when refused: the server's time, on the scripts' clock
}

// scriptBucket runs gcraScript or windowScript on one key. Its limiter has
// one round trip out at a time, so the call's context and arguments are
// kept and reused: an acquire allocates only what go-redis does.
type scriptBucket struct {
	call    *caller
	script  *redis.Script
	keys    []string
	args    []any // the shape's arguments, then need and want
	op      string
	maxWait time.Duration // the longest RetryAfter the shape can answer
	ctx     *callContext
}

// newScriptBucket runs script on key with the shape's arguments; maxWait is
// the longest wait a refusal can give.
func newScriptBucket(call *caller, script *redis.Script, key, op string, maxWait time.Duration, args ...any) *scriptBucket {
	return &scriptBucket{
		call: call, script: script, keys: []string{key}, op: op, maxWait: maxWait,
		args: append(args, 0, 0), ctx: newCallContext(),
	}
}

func (b *scriptBucket) take(ctx context.Context, need, want int) (grant, error) {
	b.args[len(b.args)-2], b.args[len(b.args)-1] = need, want
	start := time.Now()
	b.ctx.begin(ctx, start, b.call.timeout)
	cmd := b.script.Run(b.ctx, b.call.client, b.keys, b.args...)
	b.ctx.end()
	err := b.call.done(ctx, b.op, b.keys[0], start, cmd.Err())
	if err != nil {
		return grant{}, err
	}
	return b.parse(cmd.Val(), need, want)
}

// parse reads the script's answer — the count granted, or {0, retry after,
// now} — and checks it against what was asked: an answer no script of
// ours gives (a count outside [need, want], a wait of 0 or longer than the
// shape allows) is an error, never a grant or a wait.
func (b *scriptBucket) parse(v any, need, want int) (grant, error) {
	switch v := v.(type) {
	case int64:
		if v < int64(need) || v > int64(want) {
			return grant{}, fmt.Errorf("fleet: %s script granted %d permits, asked for %d to %d", b.op, v, need, want)
		}
		return grant{n: int(v)}, nil
	case []any:
		if len(v) == 3 {
			retry, ok1 := v[1].(int64)
			at, ok2 := v[2].(int64)
			wait := time.Duration(retry) * time.Microsecond
			if ok1 && ok2 && v[0] == int64(0) && retry > 0 && wait <= b.maxWait {
				return grant{retryAfter: wait, at: time.Duration(at) * time.Microsecond}, nil
			}
		}
	}
	return grant{}, fmt.Errorf("fleet: %s script answered %v, not a grant nor a wait of at most %v", b.op, v, b.maxWait)
}

// ended reports whether ctx has ended, by its deadline on the clock even if
// its timer has not fired yet: a call cut short by the caller's deadline —
// go-redis sets it on the connection, where the network poller sees it
// first — is the caller's, not a failure of Redis.
// (limit.ContextEnded's rule).
func ended(ctx context.Context) bool { return limit.ContextEnded(ctx, "") != nil }

// caller makes every call to Redis: with a timeout, timed and counted in
// telemetry with the address of the node that serves the key.
type caller struct {
	client  redis.UniversalClient
	timeout time.Duration
	metrics *metrics.Fleet
	node    nodeOf
}

// do runs f with a context that ends after the timeout, for calls off the
// limiters' path, and records it as done does.
func (c *caller) do(ctx context.Context, op, key string, f func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	start := time.Now()
	err := f(cctx)
	cancel()
	return c.done(ctx, op, key, start, err)
}

// done records a call for key that started at start and ended with err:
// its latency and, unless the caller's own context ended it, its error.
func (c *caller) done(ctx context.Context, op, key string, start time.Time, err error) error {
	failed := err != nil && !ended(ctx)
	c.metrics.Called(ctx, op, c.node.addr(key), time.Since(start), failed)
	if failed {
		c.node.failed()
	}
	if failed && errors.Is(err, context.DeadlineExceeded) {
		// Not wrapped: the caller's deadline did not end, and an error that
		// matched context.DeadlineExceeded would say it had.
		return fmt.Errorf("redis %s: no answer within %v", op, c.timeout)
	}
	return err
}
