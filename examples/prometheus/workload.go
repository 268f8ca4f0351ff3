package main

import (
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/httpx"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
)

// client is one of the workload's HTTP clients and what its calls did.
type client struct {
	name    string
	http    *http.Client
	workers int
	pause   time.Duration // between a worker's calls

	calls, succeeded, failed atomic.Int64
}

// newClients builds the two clients. Between them they hold every limiter
// shape, the quota guard, a breaker that opens on three failures in a row
// and a retry budget small enough to run out during the outage.
func newClients(mp metric.MeterProvider) ([]*client, error) {
	policy := func(name string) (*resilience.Policy, error) {
		br, err := resilience.NewBreaker(resilience.BreakerOptions{Name: name, ConsecutiveFailures: 3,
			BreakDuration: time.Second, MeterProvider: mp})
		if err != nil {
			return nil, err
		}
		budget, err := resilience.NewBudget(resilience.BudgetOptions{TTL: 10 * time.Second, MinRetriesPerSecond: new(0), Ratio: new(0.05)})
		if err != nil {
			return nil, err
		}
		return resilience.HTTP(resilience.Options{
			Name: name, Breaker: br, Budget: budget, MeterProvider: mp, Retries: 4,
			Backoff:          headroom.Backoff{Initial: headroom.Duration(50 * time.Millisecond), Multiplier: 2, Max: headroom.Duration(time.Second)},
			ThrottledBackoff: headroom.Backoff{Initial: headroom.Duration(100 * time.Millisecond), Multiplier: 2, Max: headroom.Duration(2 * time.Second)},
			MaximumDelay:     headroom.Duration(2 * time.Second),
		})
	}
	api, err := policy("api")
	if err != nil {
		return nil, err
	}
	batch, err := policy("batch")
	if err != nil {
		return nil, err
	}
	apiClient, err := httpx.NewClient(httpx.WithMeterProvider(mp), httpx.WithResilience(api),
		httpx.WithRateLimit(limit.Options{Name: "api-rate", PermitsPerSecond: 40, Burst: 10}),
		httpx.WithRateLimit(limit.Options{Name: "api-pool", Concurrency: 4, QueueLimit: new(4)}),
		httpx.WithRateLimit(limit.Options{Name: "api-adaptive", Adaptive: &adaptive.ConcurrencyConfig{Initial: 8, Maximum: 16}}))
	if err != nil {
		return nil, err
	}
	batchClient, err := httpx.NewClient(httpx.WithMeterProvider(mp), httpx.WithResilience(batch),
		httpx.WithRateLimit(limit.Options{Name: "batch-window", PerWindow: &limit.WindowOptions{Permits: 300, Window: headroom.Duration(10 * time.Second)}},
			httpx.WithCost(func(*http.Request) int { return 2 })),
		httpx.WithRateLimit(limit.Options{Name: "batch-rate", AdaptiveRate: &adaptive.RateConfig{InitialUnitsPerMinute: 1800}}))
	if err != nil {
		return nil, err
	}
	return []*client{
		{name: "api", http: apiClient, workers: 12, pause: 20 * time.Millisecond},
		{name: "batch", http: batchClient, workers: 6, pause: 50 * time.Millisecond},
	}, nil
}

// trickle is the pause between calls of the workload's quiet phase: two
// calls a second a client, within every quota of the server.
const trickle = 500 * time.Millisecond

// run has workers call url, each pausing pause between calls, until ctx
// ends.
func (c *client) run(ctx context.Context, url string, workers int, pause time.Duration) {
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				c.call(ctx, url)
				select {
				case <-ctx.Done():
				case <-time.After(pause):
				}
			}
		})
	}
	wg.Wait()
}

// call makes one call, counted once it has a result; a call cut short by
// the end of the workload is counted too, as the runner counts it.
func (c *client) call(ctx context.Context, url string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		panic(err)
	}
	c.calls.Add(1)
	resp, err := c.http.Do(req)
	if err != nil {
		c.failed.Add(1)
		return
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode < 400 {
		c.succeeded.Add(1)
	} else {
		c.failed.Add(1)
	}
}
