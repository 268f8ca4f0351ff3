package limit

import (
	"weak"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// countThrottle counts a throttle reported on lease: every shape counts
// the throttles its leases carry, whether or not it learns from them.
func countThrottle(m *metrics.Limiter, lease Lease) {
	if lease.spec.outcome() == adaptive.Throttled {
		m.Throttled()
	}
}

// sample has read report owner's figures each time the meter collects. It
// holds owner through a weak pointer: the meter provider keeps m reachable,
// and a strong reference would keep owner from ever being collected.
func sample[T any](m *metrics.Limiter, owner *T, read func(*T, metrics.Figures)) {
	wp := weak.Make(owner)
	m.Sample(func(f metrics.Figures) {
		if o := wp.Value(); o != nil {
			read(o, f)
		}
	})
}

// used reports capacity less available as in use, and available.
func used(f metrics.Figures, capacity, available float64) {
	f.Set(metrics.InUse, max(capacity-available, 0))
	f.Set(metrics.Available, max(available, 0))
}
