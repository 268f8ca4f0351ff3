package metrics

import (
	"context"
	"math"
	"slices"
	"strings"
	"sync"
	"weak"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/embedded"

	"github.com/headroom-go/headroom/telemetry"
)

// registry holds the recorders a status page reads: the live limiters
// (held until Close), guards (until Close) and breakers (weakly: a
// breaker has no Close).
var registry struct {
	sync.Mutex
	limiters map[*Limiter]struct{}
	guards   map[*Guard]struct{}
	breakers []weak.Pointer[Breaker]
}

func register[T comparable](m *map[T]struct{}, v T) {
	registry.Lock()
	defer registry.Unlock()
	if *m == nil {
		*m = make(map[T]struct{})
	}
	(*m)[v] = struct{}{}
}

func unregister[T comparable](m *map[T]struct{}, v T) {
	registry.Lock()
	defer registry.Unlock()
	delete(*m, v)
}

// LimiterStatus is one limiter as a status page shows it.
type LimiterStatus struct {
	Name       string            `json:"name"`
	Kind       string            `json:"kind"`
	Attributes map[string]string `json:"attributes,omitempty"`
	Limit      *float64          `json:"limit,omitempty"` // permits, or permits a minute for the rate kinds
	RateKind   bool              `json:"rateKind"`
	InUse      *float64          `json:"inUse,omitempty"`
	Available  *float64          `json:"available,omitempty"`
	Queued     int64             `json:"queued"`
	QueueLimit int64             `json:"queueLimit"`
	Acquired   int64             `json:"acquired"`
	Denied     int64             `json:"denied"`
	Throttles  int64             `json:"throttles"`
}

// GuardStatus is one quota guard's keys.
type GuardStatus struct {
	Name string     `json:"name"`
	Keys []KeyState `json:"keys"`
}

// BreakerStatus is one circuit breaker's state.
type BreakerStatus struct {
	Name  string `json:"name"`
	State string `json:"state"`
}

// Status is every live recorder's state.
type Status struct {
	Limiters []LimiterStatus `json:"limiters"`
	Guards   []GuardStatus   `json:"guards"`
	Breakers []BreakerStatus `json:"breakers"`
}

// Snapshot reads every live limiter, guard and breaker, sorted by name.
func Snapshot() Status {
	registry.Lock()
	ls := make([]*Limiter, 0, len(registry.limiters))
	for l := range registry.limiters {
		ls = append(ls, l)
	}
	gs := make([]*Guard, 0, len(registry.guards))
	for g := range registry.guards {
		gs = append(gs, g)
	}
	var bs []*Breaker
	registry.breakers = slices.DeleteFunc(registry.breakers, func(p weak.Pointer[Breaker]) bool {
		b := p.Value()
		if b != nil {
			bs = append(bs, b)
		}
		return b == nil
	})
	registry.Unlock()

	var s Status
	for _, l := range ls {
		if !l.closed.Load() {
			s.Limiters = append(s.Limiters, l.status())
		}
	}
	for _, g := range gs {
		gst := GuardStatus{Name: g.base[0].Value.AsString()}
		g.read(func(k KeyState) { gst.Keys = append(gst.Keys, k) })
		slices.SortFunc(gst.Keys, func(a, b KeyState) int { return strings.Compare(a.Key, b.Key) })
		s.Guards = append(s.Guards, gst)
	}
	for _, b := range bs {
		s.Breakers = append(s.Breakers, BreakerStatus{Name: b.name, State: breakerStates[b.last.Load()]})
	}
	slices.SortFunc(s.Limiters, func(a, b LimiterStatus) int {
		return strings.Compare(a.Name+a.Attributes[telemetry.AttrServerAddress], b.Name+b.Attributes[telemetry.AttrServerAddress])
	})
	slices.SortFunc(s.Guards, func(a, b GuardStatus) int { return strings.Compare(a.Name, b.Name) })
	slices.SortFunc(s.Breakers, func(a, b BreakerStatus) int { return strings.Compare(a.Name, b.Name) })
	return s
}

// status reads l as its callback would report it.
func (m *Limiter) status() LimiterStatus {
	set := m.base[0]
	attrs := metric.NewObserveConfig([]metric.ObserveOption{set}).Attributes()
	st := LimiterStatus{RateKind: m.rateKind, Attributes: map[string]string{}}
	for it := attrs.Iter(); it.Next(); {
		kv := it.Attribute()
		switch kv.Key {
		case telemetry.AttrLimiter:
			st.Name = kv.Value.String()
		case telemetry.AttrLimiterKind:
			st.Kind = kv.Value.String()
		default:
			st.Attributes[string(kv.Key)] = kv.Value.String()
		}
	}
	rec := &recorder{m: m, values: map[any]float64{}}
	_ = m.observe(context.Background(), rec)
	for inst, v := range rec.values {
		switch inst {
		case any(m.limitG):
			st.Limit = ptr(v)
		case any(m.figureG[InUse]):
			st.InUse = ptr(v)
		case any(m.figureG[Available]):
			st.Available = ptr(v)
		}
	}
	st.Queued, st.QueueLimit = m.queued.Load(), m.queueMax.Load()
	st.Acquired, st.Denied, st.Throttles = rec.acquired, rec.denied, m.throttles.Load()
	return st
}

func ptr(v float64) *float64 { return &v }

// recorder is a metric.Observer that keeps what one callback reports.
type recorder struct {
	embedded.Observer
	m                *Limiter
	values           map[any]float64
	acquired, denied int64
}

func (r *recorder) ObserveFloat64(o metric.Float64Observable, v float64, _ ...metric.ObserveOption) {
	if !math.IsNaN(v) {
		r.values[o] = v
	}
}

func (r *recorder) ObserveInt64(o metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	if any(o) != any(r.m.leases) {
		return
	}
	attrs := metric.NewObserveConfig(opts).Attributes()
	outcome, _ := attrs.Value(attribute.Key(telemetry.AttrOutcome))
	if outcome.AsString() == OutcomeAcquired {
		r.acquired += v
	} else {
		r.denied += v
	}
}
