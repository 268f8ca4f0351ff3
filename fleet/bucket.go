package fleet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
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
	at         time.Duration // the server's time of the answer, since clockBase
}

// scriptBucket runs gcraScript or windowScript on one key.
type scriptBucket struct {
	call   *caller
	script *redis.Script
	keys   []string
	args   []any // the shape's arguments; need and want follow
	op     string
}

func (b *scriptBucket) take(ctx context.Context, need, want int) (grant, error) {
	args := make([]any, len(b.args), len(b.args)+2)
	copy(args, b.args)
	args = append(args, need, want)
	var g grant
	err := b.call.do(ctx, b.op, func(ctx context.Context) error {
		r, err := b.script.Run(ctx, b.call.client, b.keys, args...).Int64Slice()
		if err != nil {
			return err
		}
		if len(r) != 3 {
			return fmt.Errorf("fleet: %s script answered %d values, want 3", b.op, len(r))
		}
		g = grant{n: int(r[0]), retryAfter: time.Duration(r[1]) * time.Microsecond, at: time.Duration(r[2]) * time.Microsecond}
		return nil
	})
	return g, err
}

// caller makes every call to Redis: with a timeout, timed and counted in
// telemetry.
type caller struct {
	client  redis.UniversalClient
	timeout time.Duration
	metrics *metrics.Fleet
}

// do runs f with a context that ends after the timeout, and records its
// latency and, unless the caller's own context ended it, its error.
func (c *caller) do(ctx context.Context, op string, f func(ctx context.Context) error) error {
	cctx, cancel := context.WithTimeout(ctx, c.timeout)
	start := time.Now()
	err := f(cctx)
	cancel()
	c.metrics.Called(op, time.Since(start), err != nil && ctx.Err() == nil)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		// Not wrapped: the caller's deadline did not end, and an error that
		// matched context.DeadlineExceeded would say it had.
		return fmt.Errorf("redis %s: no answer within %v", op, c.timeout)
	}
	return err
}
