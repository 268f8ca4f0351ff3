package fleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// fakeBucket is the token bucket of gcraScript on the test's clock, for
// testing/synctest bubbles: a Redis whose round trip takes rtt (half on the
// way there, half back) and whose answers can be turned into errors.
type fakeBucket struct {
	interval time.Duration
	burst    int
	rtt      time.Duration

	mu    sync.Mutex
	tat   time.Time
	calls atomic.Int64
	down  atomic.Bool
}

var errFakeDown = errors.New("fake redis: connection refused")

func (f *fakeBucket) take(ctx context.Context, need, want int) (grant, error) {
	f.calls.Add(1)
	if err := pause(ctx, f.rtt/2); err != nil {
		return grant{}, err
	}
	if f.down.Load() {
		return grant{}, errFakeDown
	}
	f.mu.Lock()
	now := time.Now()
	tat := f.tat
	if tat.Before(now) {
		tat = now
	}
	free := int((now.Sub(tat) + time.Duration(f.burst)*f.interval) / f.interval)
	g := grant{}
	if free < need {
		g.retryAfter = tat.Add(time.Duration(need-f.burst) * f.interval).Sub(now)
	} else {
		g.n = min(want, free)
		f.tat = tat.Add(time.Duration(g.n) * f.interval)
	}
	f.mu.Unlock()
	return g, pause(ctx, f.rtt/2)
}

// pause is the fake's latency: d of the bubble's time, or less if ctx ends.
func pause(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// fakeLimiter is a shared limiter of capacity permits on b, built as the
// constructors build one, with o's defaults.
func fakeLimiter(b *fakeBucket, capacity int, o Options) *limiter {
	o = o.withDefaults()
	return assemble(o, capacity, metrics.KindPerSecond, float64(time.Minute/b.interval), b, nil)
}

// countTo is an InstanceCounter the test sets.
type countTo struct{ n atomic.Int64 }

func (c *countTo) Instances() int { return int(c.n.Load()) }

var _ adaptive.InstanceCounter = (*countTo)(nil)
