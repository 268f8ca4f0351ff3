package limit

import (
	"context"
	"math"
	"runtime"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// A limiter dropped without a Close must not stay registered with the meter
// provider: a service that builds one per host would otherwise leak a
// registration per host for ever.
func TestDroppedLimiterUnregistersItsMetrics(t *testing.T) {
	for name, build := range map[string]func(mp metric.MeterProvider) (Limiter, error){
		"PerSecond": func(mp metric.MeterProvider) (Limiter, error) { return PerSecond(10, 10, WithMeterProvider(mp)) },
		"PerWindow": func(mp metric.MeterProvider) (Limiter, error) {
			return PerWindow(10, time.Second, WithMeterProvider(mp))
		},
		"Concurrency": func(mp metric.MeterProvider) (Limiter, error) { return Concurrency(10, WithMeterProvider(mp)) },
		"Adaptive": func(mp metric.MeterProvider) (Limiter, error) {
			return New(Options{Adaptive: &adaptive.ConcurrencyConfig{}, MeterProvider: mp})
		},
		"AdaptiveRate": func(mp metric.MeterProvider) (Limiter, error) {
			return New(Options{AdaptiveRate: &adaptive.RateConfig{}, MeterProvider: mp})
		},
	} {
		t.Run(name, func(t *testing.T) {
			r, mp := metricstest.New(t)
			func() { // the limiter is reachable only inside
				lim, err := build(mp)
				if err != nil {
					t.Fatal(err)
				}
				lease, err := lim.Acquire(t.Context())
				if err != nil {
					t.Fatal(err)
				}
				lease.Release()
				if len(metricValues(t, r)) == 0 {
					t.Fatal("nothing reported while the limiter is alive")
				}
			}()
			for range 200 {
				if len(metricValues(t, r)) == 0 {
					return
				}
				runtime.GC()
				runtime.Gosched() // cleanups run on their own goroutine
			}
			t.Errorf("still reported after the limiter was dropped: %v", metricValues(t, r))
		})
	}
}

// headroom.limiter.queue.length is permits held by waiting callers (unit
// {permit}): the adaptive rate limiter counts a waiter's cost, as every
// other shape does, not 1 per request.
func TestAdaptiveRateQueueLengthCountsPermits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := metricstest.New(t)
		l, err := AdaptiveRate(adaptive.RateConfig{}, WithName("ar"), WithMeterProvider(mp), WithQueueLimit(100))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		for l.State().Tokens >= 1 {
			lease, _ := l.Acquire(context.Background())
			lease.Release()
		}
		const key = "headroom.limiter.queue.length{ar,adaptive_rate}"
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 2)
		for _, c := range []context.Context{context.Background(), ctx} {
			go func() {
				lease, err := l.AcquireN(c, 5)
				lease.Release()
				done <- err
			}()
		}
		synctest.Wait()
		if got := metricValues(t, r)[key]; got != 10 {
			t.Errorf("queue length while two requests of 5 units wait = %v; want 10 (permits)", got)
		}
		cancel() // the second leaves by cancellation, the first by a grant
		synctest.Wait()
		if got := metricValues(t, r)[key]; got != 5 {
			t.Errorf("queue length after one of two requests of 5 cancelled = %v; want 5", got)
		}
		<-done
		<-done
		if got := metricValues(t, r)[key]; got != 0 {
			t.Errorf("queue length once nobody waits = %v; want 0", got)
		}
	})
}

// Every shape counts a lease of cost 0, which is always granted, as
// acquired.
func TestFreeLeaseCountsAsAcquired(t *testing.T) {
	for name, o := range map[string]Options{
		"per_second":    {PermitsPerSecond: 1},
		"per_window":    {PerWindow: &WindowOptions{Permits: 1, Window: headroom.Duration(time.Second)}},
		"concurrency":   {Concurrency: 1},
		"adaptive":      {Adaptive: &adaptive.ConcurrencyConfig{}},
		"adaptive_rate": {AdaptiveRate: &adaptive.RateConfig{}},
	} {
		t.Run(name, func(t *testing.T) {
			r, mp := metricstest.New(t)
			o.Name, o.MeterProvider = "x", mp
			l, err := New(o)
			if err != nil {
				t.Fatal(err)
			}
			lease, err := l.AcquireN(t.Context(), 0)
			if err != nil {
				t.Fatal(err)
			}
			lease.Release()
			key := "headroom.limiter.leases{x," + name + ",acquired}"
			if got := metricValues(t, r)[key]; got != 1 {
				t.Errorf("%s = %v after one lease of cost 0; want 1", key, got)
			}
		})
	}
}

// headroom.limiter.limit is the rate in permits per minute for the rate
// limiters (telemetry.LimitName), set when they are built.
func TestRateLimitersReportTheirRatePerMinute(t *testing.T) {
	for _, c := range []struct {
		name string
		o    Options
		want float64
	}{
		{"10/s", Options{PermitsPerSecond: 10}, 600},
		{"0.5/s", Options{PermitsPerSecond: 0.5, Burst: 3}, 30},
		{"1000/min", Options{PerWindow: &WindowOptions{Permits: 1000, Window: headroom.Duration(time.Minute)}}, 1000},
		{"10/10s", Options{PerWindow: &WindowOptions{Permits: 10, Window: headroom.Duration(10 * time.Second)}}, 60},
		{"3/h", Options{PerWindow: &WindowOptions{Permits: 3, Window: headroom.Duration(time.Hour)}}, 0.05},
	} {
		r, mp := metricstest.New(t)
		c.o.Name, c.o.MeterProvider = "x", mp
		if _, err := New(c.o); err != nil {
			t.Fatal(err)
		}
		kind := "per_window"
		if c.o.PermitsPerSecond != 0 {
			kind = "per_second"
		}
		key := "headroom.limiter.rate{x," + kind + "}"
		if got, ok := metricValues(t, r)[key]; !ok || math.Abs(got-c.want) > 1e-12*c.want {
			t.Errorf("%s: %s = %v (reported %v); want %v", c.name, key, got, ok, c.want)
		}
	}
}
