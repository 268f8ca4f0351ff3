package metrics

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/telemetry"
)

// Fleet records one fleet limiter's (counter's, quota view's) calls to
// Redis. Its instruments are synchronous and its attribute sets are built
// once, so recording allocates nothing and needs no callback to
// unregister. A nil *Fleet records nothing.
type Fleet struct {
	events    *Events
	failing   atomic.Bool // a request fell back since Redis last answered
	duration  metric.Float64Histogram
	errors    metric.Int64Counter
	fallbacks metric.Int64Counter
	instances metric.Int64Gauge
	who       attribute.KeyValue
	// calls holds each (operation, node) pair's attributes, made on its
	// first call.
	callsMu sync.RWMutex
	calls   map[callKey]callOpts
	open    metric.MeasurementOption // fallbacks under FailOpen
	closed  metric.MeasurementOption // fallbacks under FailClosed
	base    metric.MeasurementOption
}

// redisBuckets are FleetRedisDurationName's boundaries, in seconds: from
// 100 µs, a loopback round trip, to a second, well past any timeout.
var redisBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// The values of telemetry.AttrFleetOperation: what a call to Redis did.
const (
	OpTokenBucket   = "token_bucket"
	OpSlidingWindow = "sliding_window"
	OpHeartbeat     = "heartbeat"
	OpQuotaPublish  = "quota_publish"
	OpQuotaReserve  = "quota_reserve"
	OpQuotaRead     = "quota_read"
)

// NewFleet opens the fleet instruments on mp (nil: the global provider)
// for the one named name. Like every recorder it never fails its caller:
// an instrument it cannot create is reported through otel.Handle and the
// Fleet records nothing.
func NewFleet(mp metric.MeterProvider, name string) *Fleet {
	in := newInstruments(mp)
	m := &Fleet{}
	m.duration = in.histogram(telemetry.FleetRedisDurationName, "How long each call to Redis took.", redisBuckets)
	m.errors = in.counter(telemetry.FleetRedisErrorsName, "{error}", "Calls to Redis that failed.")
	m.fallbacks = in.counter(telemetry.FleetFallbacksName, "{request}", "Requests decided without Redis by the failure policy.")
	m.instances = in.gauge(telemetry.FleetInstancesName, "{instance}", "The processes an instance counter last counted.")
	if in.err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: fleet %q: %w", name, in.err))
		return nil
	}
	who := attribute.String(telemetry.AttrLimiter, name)
	m.who = who
	m.calls = make(map[callKey]callOpts)
	m.base = metric.WithAttributeSet(attribute.NewSet(who))
	m.open = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetPolicy, PolicyFailOpen)))
	m.closed = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetPolicy, PolicyFailClosed)))
	return m
}

// The attributes naming the node that served a call, from OpenTelemetry's
// semantic conventions for a database client's calls.
const (
	AttrServerAddress = "server.address"
	AttrServerPort    = "server.port"
)

type callKey struct{ op, addr string }

type callOpts struct {
	record []metric.RecordOption
	add    []metric.AddOption
}

// Called records one call to Redis for op that the node at addr ("host:port";
// empty when unknown) served in d, and failed if failed, with the caller's
// ctx, so that a sampled trace's exemplar points at the call.
func (m *Fleet) Called(ctx context.Context, op, addr string, d time.Duration, failed bool) {
	if m == nil {
		return
	}
	o := m.callOpts(op, addr)
	m.duration.Record(ctx, d.Seconds(), o.record...)
	if failed {
		m.errors.Add(ctx, 1, o.add...)
	}
}

// callOpts returns the attributes of op's calls to addr, made once.
func (m *Fleet) callOpts(op, addr string) callOpts {
	k := callKey{op, addr}
	m.callsMu.RLock()
	o, ok := m.calls[k]
	m.callsMu.RUnlock()
	if ok {
		return o
	}
	attrs := []attribute.KeyValue{m.who, attribute.String(telemetry.AttrFleetOperation, op)}
	if host, port, err := net.SplitHostPort(addr); err == nil {
		attrs = append(attrs, attribute.String(AttrServerAddress, host))
		if p, err := strconv.Atoi(port); err == nil {
			attrs = append(attrs, attribute.Int(AttrServerPort, p))
		}
	}
	set := metric.WithAttributeSet(attribute.NewSet(attrs...))
	o = callOpts{record: []metric.RecordOption{set}, add: []metric.AddOption{set}}
	m.callsMu.Lock()
	m.calls[k] = o
	m.callsMu.Unlock()
	return o
}

// FellBack records a request the failure policy decided, with the
// caller's ctx.
func (m *Fleet) FellBack(ctx context.Context, failOpen bool) {
	if m == nil {
		return
	}
	o := m.closed
	if failOpen {
		o = m.open
	}
	m.fallbacks.Add(ctx, 1, o)
	m.failing.Store(true)
	if failOpen {
		m.events.Log(ctx, slog.LevelWarn, "fleet: Redis out of reach, failing open on this process's share", "")
	} else {
		m.events.Log(ctx, slog.LevelError, "fleet: Redis out of reach, failing closed: refusing requests", "")
	}
}

// NewFleetLog is NewFleet with its events logged to l (Log).
func NewFleetLog(mp metric.MeterProvider, name string, l *slog.Logger) *Fleet {
	m := NewFleet(mp, name)
	m.Log(l)
	return m
}

// Answered notes that Redis answered: after requests fell back, it logs
// the recovery once (Info).
func (m *Fleet) Answered(ctx context.Context) {
	if m != nil && m.failing.Load() && m.failing.Swap(false) {
		m.events.Log(ctx, slog.LevelInfo, "fleet: Redis answers again; deciding through Redis", "")
	}
}

// Log sends the fleet's notable events to l: failing open (Warn), failing
// closed (Error), each summarised once a minute, and recovering (Info).
// nil l logs nothing. Set it once, right after NewFleet.
func (m *Fleet) Log(l *slog.Logger) {
	if m != nil {
		m.events = NewEvents(l, slog.String(telemetry.AttrLimiter, m.who.Value.AsString()))
	}
}

// Counted records an instance count.
func (m *Fleet) Counted(n int) {
	if m != nil {
		m.instances.Record(context.Background(), int64(n), m.base)
	}
}
