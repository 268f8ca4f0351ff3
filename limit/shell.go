package limit

import (
	"cmp"

	"github.com/headroom-go/headroom/internal/metrics"
)

// shell is what every shape wears around its engine: its name, its
// recorder, and the reference its leases point back through.
type shell struct {
	name    string
	metrics *metrics.Limiter
	self    ownerRef
	// spent is the record of every lease of a shape whose permits are
	// spent when granted (PerSecond, PerWindow); those shapes are no
	// leaseOwner.
	spent leaseRecord
}

// Name is the limiter's name, as it appears in errors and telemetry.
func (s *shell) Name() string { return s.name }

// dress sets up the shell of owner, a limiter of kind that o describes: named
// after its kind unless o names it, recording through o's meter provider with
// o's attributes, its leases pointing back at owner if it frees something on
// release (else at the spent record), and its instruments closed once owner
// is dropped (the meter provider would otherwise keep them for ever).
func (s *shell) dress(o Options, kind string, owner any) {
	s.name = cmp.Or(o.Name, kind)
	s.metrics = metrics.NewLimiter(o.MeterProvider, s.name, kind, o.Attributes...)
	s.metrics.SetQueueLimit(o.queueLimit())
	s.metrics.Log(o.Logger)
	if lo, ok := owner.(leaseOwner); ok {
		s.self.leaseOwner = lo
	}
	s.spent = leaseRecord{spent: s.metrics}
	s.metrics.CloseWhenUnreachable(owner)
}
