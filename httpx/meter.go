package httpx

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/telemetry"
)

// hostMeters returns a meter provider that adds headroom.host = host to every
// measurement a limiter records through it: the limit package builds its
// instruments with telemetry.NewLimiter from Options.MeterProvider and has no
// field for extra attributes, so the host travels in the provider. Every
// instrument telemetry.NewLimiter makes is covered: the observable ones
// through the registered callback's observer, the wait histogram through its
// Record.
func hostMeters(mp metric.MeterProvider, host string) metric.MeterProvider {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	return hostProvider{MeterProvider: mp, opt: metric.WithAttributes(attribute.String(telemetry.AttrHost, host))}
}

type hostProvider struct {
	metric.MeterProvider
	opt metric.MeasurementOption
}

func (p hostProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return hostMeter{Meter: p.MeterProvider.Meter(name, opts...), opt: p.opt}
}

type hostMeter struct {
	metric.Meter
	opt metric.MeasurementOption
}

func (m hostMeter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	opt := m.opt
	return m.Meter.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		return f(ctx, hostObserver{Observer: o, opt: opt})
	}, insts...)
}

func (m hostMeter) Float64Histogram(name string, opts ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	h, err := m.Meter.Float64Histogram(name, opts...)
	if h == nil {
		return h, err
	}
	return hostHistogram{Float64Histogram: h, opt: m.opt}, err
}

func (m hostMeter) Int64Counter(name string, opts ...metric.Int64CounterOption) (metric.Int64Counter, error) {
	c, err := m.Meter.Int64Counter(name, opts...)
	if c == nil {
		return c, err
	}
	return hostCounter{Int64Counter: c, opt: m.opt}, err
}

type hostObserver struct {
	metric.Observer
	opt metric.ObserveOption
}

func (o hostObserver) ObserveInt64(inst metric.Int64Observable, v int64, opts ...metric.ObserveOption) {
	o.Observer.ObserveInt64(inst, v, append(opts[:len(opts):len(opts)], o.opt)...)
}

func (o hostObserver) ObserveFloat64(inst metric.Float64Observable, v float64, opts ...metric.ObserveOption) {
	o.Observer.ObserveFloat64(inst, v, append(opts[:len(opts):len(opts)], o.opt)...)
}

type hostHistogram struct {
	metric.Float64Histogram
	opt metric.RecordOption
}

func (h hostHistogram) Record(ctx context.Context, v float64, opts ...metric.RecordOption) {
	h.Float64Histogram.Record(ctx, v, append(opts[:len(opts):len(opts)], h.opt)...)
}

type hostCounter struct {
	metric.Int64Counter
	opt metric.AddOption
}

func (c hostCounter) Add(ctx context.Context, v int64, opts ...metric.AddOption) {
	c.Int64Counter.Add(ctx, v, append(opts[:len(opts):len(opts)], c.opt)...)
}
