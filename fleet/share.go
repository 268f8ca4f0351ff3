package fleet

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
	"go.opentelemetry.io/otel/attribute"
)

// shareAttribute marks the telemetry of a share's limiter, which carries
// the shared limiter's name and kind: its series are the requests this
// process decided alone, beside the shared limiter's own.
var shareAttribute = attribute.String(telemetry.AttrFleetPolicy, metrics.PolicyFailOpen)

// share is what failing open enforces while Redis is out of reach: this
// process's share of the limit — the limit divided by the instance count
// when the outage began — in a limiter of the limit package, built full at
// the first request of an outage and dropped once Redis answers again. It
// is not rebuilt while the outage lasts, even if the count changes: a
// rebuilt share would start full, and a count read just after a failover
// can be low (the new master may have lost heartbeats), so every rebuild
// could admit a whole share more. One outage admits at most one share's
// burst and its rate over the outage (docs/fleet.md).
type share struct {
	counter adaptive.InstanceCounter
	build   func(n int) (limit.Limiter, error)
	cur     atomic.Pointer[shareOf]
	mu      sync.Mutex
}

type shareOf struct {
	n   int
	lim limit.Limiter
}

// acquire takes cost permits from the share, as limit's limiters do. A
// cost the share can never hold, though the whole limit could, is refused
// as a throttle: it is a matter of waiting for Redis, not a bad request.
func (s *share) acquire(ctx context.Context, name string, cost int) (limit.Lease, error) {
	lim, err := s.get()
	if err != nil {
		return limit.Lease{}, &UnavailableError{Limiter: name, Err: err}
	}
	l, err := lim.AcquireN(ctx, cost)
	if errors.Is(err, limit.ErrCost) {
		return limit.Lease{}, &limit.RateLimitedError{Limiter: name, Reason: telemetry.ReasonNoPermit}
	}
	return l, err
}

// get returns the limiter of this outage's share.
func (s *share) get() (limit.Limiter, error) {
	if c := s.cur.Load(); c != nil {
		return c.lim, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.cur.Load(); c != nil {
		return c.lim, nil
	}
	n := max(s.counter.Instances(), 1)
	lim, err := s.build(n)
	if err != nil {
		return nil, err
	}
	s.cur.Store(&shareOf{n: n, lim: lim})
	return lim, nil
}

// end ends the outage: Redis answered. The next one builds a new share.
func (s *share) end() {
	if s.cur.Load() != nil {
		s.cur.Store(nil)
	}
}
