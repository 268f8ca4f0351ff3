package limit

import (
	"time"

	"github.com/headroom-go/headroom"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// An Option adjusts the Options a constructor builds.
type Option func(*Options)

// WithName names the limiter in errors and telemetry.
func WithName(name string) Option { return func(o *Options) { o.Name = name } }

// WithQueueLimit lets up to permits permits' worth of callers wait in FIFO
// order instead of being refused at once; see Options.QueueLimit.
func WithQueueLimit(permits int) Option { return func(o *Options) { o.QueueLimit = permits } }

// WithMeterProvider sends the limiter's metrics to mp instead of the global
// meter provider.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(o *Options) { o.MeterProvider = mp }
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

// PerSecond returns a token bucket that grants permits a second and holds
// burst permits: at most burst go at once, and at most burst−1+permits in
// any second. The bucket starts full. A burst of 1 is the smooth limit a
// reader of "100 a second" expects: PerSecond(100, 1) lets no more than 100
// through in any second; PerSecond(100, 100) lets 100 go at once and up to
// 199 in the first second. A burst of 0 means 1.
func PerSecond(permits float64, burst int, opts ...Option) (Limiter, error) {
	if permits == 0 {
		return nil, &headroom.ConfigError{Package: "limit", Field: "PermitsPerSecond", Value: 0.0, Want: "a rate above 0"}
	}
	return build(Options{PermitsPerSecond: permits, Burst: burst}, opts)
}

// PerWindow returns a sliding window that grants at most permits in any
// interval of length window. The window slides in 8 segments (set
// Options.PerWindow.Segments and call New for finer ones), so the budget
// cannot be spent at the end of one window and again at the start of the
// next.
func PerWindow(permits int, window time.Duration, opts ...Option) (Limiter, error) {
	return build(Options{PerWindow: &WindowOptions{Permits: permits, Window: Duration(window)}}, opts)
}

// Concurrency returns a bulkhead that lets at most permits permits be held
// at once, whatever their rate.
func Concurrency(permits int, opts ...Option) (Limiter, error) {
	if permits == 0 {
		// 0 would read as "no shape"; say what is wrong with it instead.
		return nil, &headroom.ConfigError{Package: "limit", Field: "Concurrency", Value: 0, Want: "1 or more"}
	}
	return build(Options{Concurrency: permits}, opts)
}
