package fleet

import (
	"time"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit"
)

// PerWindow returns a sliding window of permits in any window, shared by
// every process that builds it with the same Prefix and Name on the same
// Redis. The window slides in Options.Segments steps; a segment's permits
// are free again one window after the last of them was granted, so no span
// of one window, at any alignment, holds more than permits (plus the
// batching bound, docs/fleet.md). One Lua script on the Redis server's
// clock decides each acquire in one round trip, with an exact RetryAfter;
// the key expires one window after the last grant.
//
// It returns every problem with the settings at once, each a
// *headroom.ConfigError.
func PerWindow(c redis.UniversalClient, permits int, window time.Duration, o Options) (limit.Limiter, error) {
	if err := o.problems(func(l *problems.List) {
		checkWindow(l, permits, window)
		checkClient(l, c)
		o.checkShards(l, "permits", permits)
	}); err != nil {
		return nil, err
	}
	o = o.withDefaults()
	windowUS := window.Microseconds()
	segmentUS := max((windowUS+int64(o.Segments)-1)/int64(o.Segments), 1)
	perMinute := float64(permits) * float64(time.Minute) / float64(window)
	params := func(m, n int) ([]any, time.Duration) {
		return []any{windowUS, segmentUS, max(permits*m/n, 1)}, time.Duration(windowUS) * time.Microsecond
	}
	l := newLimiter(c, o, permits, metrics.KindPerWindow, perMinute, metrics.OpSlidingWindow, windowScript, "window", params)
	l.share.build = func(n int) (limit.Limiter, error) {
		return limit.New(limit.Options{
			PerWindow:  &limit.WindowOptions{Permits: max(permits/n, 1), Window: headroom.Duration(window), Segments: o.Segments},
			QueueLimit: o.QueueLimit, Name: o.Name, MeterProvider: o.MeterProvider,
			Attributes: []attribute.KeyValue{shareAttribute},
		})
	}
	return l, nil
}
