package metrics

import (
	"context"
	"fmt"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/telemetry"
)

// quotaKeysMax is how many keys a guard labels apart: the first it
// reports or refuses, for the rest of its life, as HostSeries labels hosts.
const quotaKeysMax = 100

// otherKey stands for the keys past quotaKeysMax on the refusals
// counter, so that a guard keyed by something unbounded cannot grow the
// series without bound. Those keys report no gauges: the limits and
// remaining allowances of several keys do not add up.
const otherKey = telemetry.OtherHosts

// KeyState is what a quota guard knows of one key, as its gauges report it.
type KeyState struct {
	Key              string
	Known            bool // Limit and Remaining are fresh published figures
	Limit, Remaining int64
	Reset, Blocked   time.Duration // until the reset, until the block ends; 0 when none
}

// Guard holds a quota guard's instruments: the refusals counter and, read
// when the meter collects, the gauges of each key. A nil *Guard records
// nothing.
type Guard struct {
	refusals                         metric.Int64Counter
	limit, remaining, reset, blocked metric.Float64ObservableGauge
	base                             []attribute.KeyValue
	keyAttrs                         func(key string) []attribute.KeyValue
	read                             func(report func(KeyState))
	reg                              metric.Registration

	mu   sync.Mutex
	keys map[string]struct{} // the keys labelled apart, at most quotaKeysMax
}

// NewGuard registers the instruments of the guard called name with mp (nil:
// the global meter provider). read reports the guard's keys each time the
// meter collects, of which the first quotaKeysMax have gauges; it must not reference
// the guard that owns the Guard, or that guard is never collected. It
// never fails: on error it reports through otel.Handle and returns nil.
//
// keyAttrs, when not nil, gives each key's further attributes (a host's
// server.address and server.port); a key it folds (see Folded) counts its
// refusals under the key OtherHosts and reports no gauges.
func NewGuard(mp metric.MeterProvider, name string, keyAttrs func(key string) []attribute.KeyValue, read func(report func(KeyState))) *Guard {
	in := newInstruments(mp)
	g := &Guard{
		refusals:  in.counter(telemetry.QuotaRefusalsName, "{refusal}", "Attempts the quota guard refused, by reason."),
		limit:     in.observableFloatGauge(telemetry.QuotaLimitName, "{unit}", "The limit the dependency published."),
		remaining: in.observableFloatGauge(telemetry.QuotaRemainingName, "{unit}", "The remaining allowance the dependency published, less attempts since."),
		reset:     in.observableFloatGauge(telemetry.QuotaResetName, "s", "Time until the published window resets."),
		blocked:   in.observableFloatGauge(telemetry.QuotaBlockedName, "s", "Time until the guard lets attempts through again."),
		base:      []attribute.KeyValue{attribute.String(telemetry.AttrLimiter, name)},
		keyAttrs:  keyAttrs,
		read:      read,
		keys:      map[string]struct{}{},
	}
	err := in.err
	if err == nil {
		g.reg, err = in.meter.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			read(func(s KeyState) {
				if kvs, folded := g.attrs(s.Key); !folded && g.admit(s.Key) {
					g.observe(o, s, kvs)
				}
			})
			return nil
		}, g.limit, g.remaining, g.reset, g.blocked)
	}
	if err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: quota guard %q: %w", name, err))
		return nil
	}
	register(&registry.guards, g)
	return g
}

// attrs is key's attributes, and whether its series folds into
// OtherHosts'.
func (g *Guard) attrs(key string) (kvs []attribute.KeyValue, folded bool) {
	kvs = append(g.base[:len(g.base):len(g.base)], attribute.String(telemetry.AttrQuotaKey, key))
	if g.keyAttrs == nil {
		return kvs, false
	}
	more := g.keyAttrs(key)
	if Folded(more) {
		return append(g.base[:len(g.base):len(g.base)], attribute.String(telemetry.AttrQuotaKey, telemetry.OtherHosts), more[0]), true
	}
	return append(kvs, more...), false
}

func (g *Guard) observe(o metric.Observer, s KeyState, kvs []attribute.KeyValue) {
	opt := metric.WithAttributes(kvs...)
	if s.Known {
		o.ObserveFloat64(g.limit, float64(s.Limit), opt)
		o.ObserveFloat64(g.remaining, float64(s.Remaining), opt)
	}
	o.ObserveFloat64(g.reset, max(s.Reset, 0).Seconds(), opt)
	o.ObserveFloat64(g.blocked, max(s.Blocked, 0).Seconds(), opt)
}

// Refused counts a refusal for key with its reason, with the refused
// caller's ctx, so that a sampled trace's exemplar points at it.
func (g *Guard) Refused(ctx context.Context, key, reason string) {
	if g == nil {
		return
	}
	kvs, folded := g.attrs(key)
	if folded {
		g.refusals.Add(ctx, 1, metric.WithAttributes(append(kvs, attribute.String(telemetry.AttrReason, reason))...))
		return
	}
	if !g.admit(key) {
		kvs = append(g.base[:len(g.base):len(g.base)], attribute.String(telemetry.AttrQuotaKey, otherKey))
	}
	g.refusals.Add(ctx, 1, metric.WithAttributes(append(kvs, attribute.String(telemetry.AttrReason, reason))...))
}

// admit reports whether key is labelled apart: one of the first
// quotaKeysMax keys the guard reported or refused.
func (g *Guard) admit(key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if _, ok := g.keys[key]; ok {
		return true
	}
	if len(g.keys) >= quotaKeysMax {
		return false
	}
	g.keys[key] = struct{}{}
	return true
}

// Close unregisters the gauges' callback.
func (g *Guard) Close() {
	if g == nil || g.reg == nil {
		return
	}
	unregister(&registry.guards, g)
	if err := g.reg.Unregister(); err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: unregister: %w", err))
	}
}
