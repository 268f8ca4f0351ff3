package limit

import (
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"log/slog"
)

// An Option adjusts the Options a constructor builds.
type Option func(*Options)

// WithName names the limiter in errors and telemetry.
func WithName(name string) Option { return func(o *Options) { o.Name = name } }

// WithQueueLimit lets up to permits permits' worth of callers wait in FIFO
// order; 0 refuses at once. See Options.QueueLimit.
func WithQueueLimit(permits int) Option { return func(o *Options) { o.QueueLimit = &permits } }

// WithMeterProvider sends the limiter's metrics to mp instead of the global
// meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *Options) { o.MeterProvider = mp }
}

// WithLogger sends the limiter's notable events to l: see Options.Logger.
func WithLogger(l *slog.Logger) Option {
	return func(o *Options) { o.Logger = l }
}

// WithAttributes adds attributes to every measurement the limiter records.
func WithAttributes(kv ...attribute.KeyValue) Option {
	return func(o *Options) { o.Attributes = append(o.Attributes, kv...) }
}

func build(o Options, opts []Option) (Limiter, error) {
	for _, opt := range opts {
		opt(&o)
	}
	return New(o)
}
