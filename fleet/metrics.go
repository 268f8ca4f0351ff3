package fleet

import (
	"context"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/telemetry"
)

// metrics records one limiter's (counter's, quota view's) calls to Redis.
// Its instruments are synchronous and its attribute sets are built once, so
// recording allocates nothing and needs no callback to unregister. A nil
// *metrics records nothing.
type metrics struct {
	duration  metric.Float64Histogram
	errors    metric.Int64Counter
	fallbacks metric.Int64Counter
	instances metric.Int64Gauge
	byOp      map[string]metric.MeasurementOption
	open      metric.MeasurementOption // fallbacks under FailOpen
	closed    metric.MeasurementOption // fallbacks under FailClosed
	base      metric.MeasurementOption
}

// durationBuckets are FleetRedisDurationName's boundaries, in seconds: from
// 100 µs, a loopback round trip, to a second, well past any timeout.
var durationBuckets = []float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

// The values of telemetry.AttrFleetOperation: what a call to Redis did.
const (
	opTokenBucket   = "token_bucket"
	opSlidingWindow = "sliding_window"
	opHeartbeat     = "heartbeat"
	opQuotaPublish  = "quota_publish"
	opQuotaReserve  = "quota_reserve"
	opQuotaRead     = "quota_read"
)

var fleetOps = []string{
	opTokenBucket, opSlidingWindow, opHeartbeat,
	opQuotaPublish, opQuotaReserve, opQuotaRead,
}

// newMetrics opens the fleet instruments on mp (nil: the global provider)
// for the one named name. Like the rest of telemetry it never fails its
// caller: an instrument it cannot create is reported through otel.Handle
// and left as a no-op.
func newMetrics(mp metric.MeterProvider, name string) *metrics {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	meter := mp.Meter(telemetry.ScopeName)
	var err error
	keep := func(e error) {
		if e != nil && err == nil {
			err = e
		}
	}
	m := &metrics{byOp: make(map[string]metric.MeasurementOption, len(fleetOps))}
	var e error
	m.duration, e = meter.Float64Histogram(telemetry.FleetRedisDurationName, metric.WithUnit("s"),
		metric.WithDescription("How long each call to Redis took."), metric.WithExplicitBucketBoundaries(durationBuckets...))
	keep(e)
	m.errors, e = meter.Int64Counter(telemetry.FleetRedisErrorsName, metric.WithUnit("{error}"),
		metric.WithDescription("Calls to Redis that failed."))
	keep(e)
	m.fallbacks, e = meter.Int64Counter(telemetry.FleetFallbacksName, metric.WithUnit("{request}"),
		metric.WithDescription("Requests decided without Redis by the failure policy."))
	keep(e)
	m.instances, e = meter.Int64Gauge(telemetry.FleetInstancesName, metric.WithUnit("{instance}"),
		metric.WithDescription("The processes an instance counter last counted."))
	keep(e)
	if err != nil {
		otel.Handle(err)
	}
	who := attribute.String(telemetry.AttrLimiter, name)
	m.base = metric.WithAttributeSet(attribute.NewSet(who))
	for _, op := range fleetOps {
		m.byOp[op] = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetOperation, op)))
	}
	m.open = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetPolicy, "fail_open")))
	m.closed = metric.WithAttributeSet(attribute.NewSet(who, attribute.String(telemetry.AttrFleetPolicy, "fail_closed")))
	return m
}

// called records one call to Redis for op that took d, and failed if failed.
func (m *metrics) called(op string, d time.Duration, failed bool) {
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

// fellBack records a request the failure policy decided.
func (m *metrics) fellBack(failOpen bool) {
	if m == nil {
		return
	}
	o := m.closed
	if failOpen {
		o = m.open
	}
	m.fallbacks.Add(context.Background(), 1, o)
}

// counted records an instance count.
func (m *metrics) counted(n int) {
	if m != nil {
		m.instances.Record(context.Background(), int64(n), m.base)
	}
}
