package metrics

import (
	"context"
	"fmt"
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
	duration  metric.Float64Histogram
	errors    metric.Int64Counter
	fallbacks metric.Int64Counter
	instances metric.Int64Gauge
	byOp      map[string]metric.MeasurementOption
	open      metric.MeasurementOption // fallbacks under FailOpen
	closed    metric.MeasurementOption // fallbacks under FailClosed
	base      metric.MeasurementOption
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

var fleetOps = []string{
	OpTokenBucket, OpSlidingWindow, OpHeartbeat,
	OpQuotaPublish, OpQuotaReserve, OpQuotaRead,
}

// NewFleet opens the fleet instruments on mp (nil: the global provider)
// for the one named name. Like every recorder it never fails its caller:
// an instrument it cannot create is reported through otel.Handle and the
// Fleet records nothing.
func NewFleet(mp metric.MeterProvider, name string) *Fleet {
	in := newInstruments(mp)
	m := &Fleet{byOp: make(map[string]metric.MeasurementOption, len(fleetOps))}
	m.duration = in.histogram(telemetry.FleetRedisDurationName, "How long each call to Redis took.", redisBuckets)
	m.errors = in.counter(telemetry.FleetRedisErrorsName, "{error}", "Calls to Redis that failed.")
	m.fallbacks = in.counter(telemetry.FleetFallbacksName, "{request}", "Requests decided without Redis by the failure policy.")
	m.instances = in.gauge(telemetry.FleetInstancesName, "{instance}", "The processes an instance counter last counted.")
	if in.err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: fleet %q: %w", name, in.err))
		return nil
	}
	who := attribute.String(telemetry.AttrLimiter, name)
	m.base = metric.WithAttributeSet(attribute.NewSet(who))
	for _, op := range fleetOps {
		m.byOp[op] = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetOperation, op)))
	}
	m.open = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetPolicy, PolicyFailOpen)))
	m.closed = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetPolicy, PolicyFailClosed)))
	return m
}

// Called records one call to Redis for op that took d, and failed if failed.
func (m *Fleet) Called(op string, d time.Duration, failed bool) {
	if m == nil {
		return
	}
	o := m.byOp[op]
	ctx := context.Background()
	m.duration.Record(ctx, d.Seconds(), o)
	if failed {
		m.errors.Add(ctx, 1, o)
	}
}

// FellBack records a request the failure policy decided.
func (m *Fleet) FellBack(failOpen bool) {
	if m == nil {
		return
	}
	o := m.closed
	if failOpen {
		o = m.open
	}
	m.fallbacks.Add(context.Background(), 1, o)
}

// Counted records an instance count.
func (m *Fleet) Counted(n int) {
	if m != nil {
		m.instances.Record(context.Background(), int64(n), m.base)
	}
}
