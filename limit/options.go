package limit

import (
	"errors"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// Options describes one limiter. Set exactly one shape — PermitsPerSecond,
// PerWindow, Concurrency, Adaptive or AdaptiveRate — and New builds it. Asking
// for two shapes is an error, never a silent pick: a section that names two
// guards is one whose author expected one of them to win.
//
// Options reads from JSON with the field names below; durations are strings
// such as "1m".
type Options struct {
	// PermitsPerSecond is a token bucket: this many permits a second, with
	// Burst permits of burst. The bucket starts full.
	PermitsPerSecond float64 `json:"permitsPerSecond,omitempty"`
	// Burst is how many permits the token bucket holds: at most Burst go at
	// once, and at most Burst−1+PermitsPerSecond in any second. 0 means 1,
	// the smooth limit. PermitsPerSecond only.
	Burst int `json:"burst,omitempty"`

	// PerWindow is a sliding window: Permits in any Window.
	PerWindow *WindowOptions `json:"perWindow,omitempty"`

	// Concurrency is a bulkhead: at most this many permits held at once.
	Concurrency int `json:"concurrency,omitempty"`

	// Adaptive is a concurrency limit learned from latency. Its presence
	// turns it on: "adaptive": {} is a complete configuration.
	Adaptive *adaptive.ConcurrencyConfig `json:"adaptive,omitempty"`

	// AdaptiveRate is a rate learned from throttles (AIMD or CUBIC). Its
	// presence turns it on: "adaptiveRate": {} is a complete configuration.
	AdaptiveRate *adaptive.RateConfig `json:"adaptiveRate,omitempty"`

	// QueueLimit is how many permits' (units') worth of callers may wait, in
	// FIFO order, for every shape. 0, the default, refuses at once with a
	// RetryAfter instead, for callers that would rather do something else.
	// PerSecond spreads the RetryAfter of callers refused together so that
	// they come back one after another; the other shapes cannot tell when
	// each permit frees, and callers they refuse together come back
	// together, where most are refused again. Give a limiter that many
	// goroutines share a queue.
	QueueLimit int `json:"queueLimit,omitempty"`

	// Name names the limiter in errors and telemetry.
	Name string `json:"name,omitempty"`

	// MeterProvider receives the limiter's metrics; nil means the global one.
	MeterProvider metric.MeterProvider `json:"-"`

	// Attributes are added to every measurement the limiter records, after
	// headroom.limiter and headroom.limiter.kind; the HTTP layer adds
	// headroom.host this way.
	Attributes []attribute.KeyValue `json:"-"`
}

// WindowOptions is the sliding-window shape.
type WindowOptions struct {
	Permits int               `json:"permits"`
	Window  headroom.Duration `json:"window"`
	// Segments is how finely the window slides; 0 means 8.
	Segments int `json:"segments,omitempty"`
}

// Bounds that keep every engine's arithmetic exact in int64 nanoseconds.
const (
	maxPermitsPerSecond = 1e9
	maxBurst            = 1e9
)

// shapes lists the shapes o asks for, by field name.
func (o *Options) shapes() []string {
	var s []string
	if o.PermitsPerSecond != 0 {
		s = append(s, "PermitsPerSecond")
	}
	if o.PerWindow != nil {
		s = append(s, "PerWindow")
	}
	if o.Concurrency != 0 {
		s = append(s, "Concurrency")
	}
	if o.Adaptive != nil {
		s = append(s, "Adaptive")
	}
	if o.AdaptiveRate != nil {
		s = append(s, "AdaptiveRate")
	}
	return s
}

// Validate returns every problem with o at once, joined with errors.Join;
// each is an *headroom.ConfigError. It returns nil when New would succeed.
func (o *Options) Validate() error {
	var errs []error
	add := func(field string, value any, want string) {
		errs = append(errs, &headroom.ConfigError{Package: "limit", Field: field, Value: value, Want: want})
	}
	shapes := o.shapes()
	switch len(shapes) {
	case 0:
		add("Options", "no shape", "exactly one of PermitsPerSecond, PerWindow, Concurrency, Adaptive or AdaptiveRate")
	case 1:
	default:
		add("Options", shapes, "exactly one shape; the others would silently lose")
	}
	if o.PermitsPerSecond < 0 || o.PermitsPerSecond != o.PermitsPerSecond {
		add("PermitsPerSecond", o.PermitsPerSecond, "a rate above 0")
	}
	if o.PermitsPerSecond > maxPermitsPerSecond {
		add("PermitsPerSecond", o.PermitsPerSecond, "at most 1e9 (one permit a nanosecond)")
	}
	if o.Burst < 0 || o.Burst > maxBurst {
		add("Burst", o.Burst, "0 (1) up to 1e9")
	}
	if o.Burst != 0 && o.PermitsPerSecond == 0 {
		add("Burst", o.Burst, "0: Burst belongs to the PermitsPerSecond shape")
	}
	errs = append(errs, o.tokenBucketProblems()...)
	if w := o.PerWindow; w != nil {
		if w.Permits <= 0 {
			add("PerWindow.Permits", w.Permits, "1 or more")
		}
		if w.Window <= 0 {
			add("PerWindow.Window", w.Window, "a duration above 0, such as \"1m\"")
		}
		if w.Segments < 0 {
			add("PerWindow.Segments", w.Segments, "0 (8 segments) or more")
		}
		if w.Segments > maxSegments {
			add("PerWindow.Segments", w.Segments, "at most "+strconv.Itoa(maxSegments))
		}
		if w.Window > 0 && w.Segments > 0 && w.Window < headroom.Duration(w.Segments) {
			add("PerWindow.Segments", w.Segments, "at most one segment a nanosecond of Window")
		}
	}
	if o.Concurrency < 0 {
		add("Concurrency", o.Concurrency, "1 or more")
	}
	if o.Adaptive != nil {
		errs = append(errs, adaptiveProblems(o.Adaptive)...)
	}
	if o.AdaptiveRate != nil {
		errs = append(errs, engineProblems("AdaptiveRate.", o.AdaptiveRate.Problems())...)
	}
	if o.QueueLimit < 0 {
		add("QueueLimit", o.QueueLimit, "0 (refuse at once) or more")
	}
	return errors.Join(errs...)
}

// New builds the limiter o describes, or returns Validate's error.
func New(o Options) (Limiter, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.PermitsPerSecond != 0:
		return newPerSecond(o), nil
	case o.PerWindow != nil:
		return newPerWindow(o), nil
	case o.Concurrency != 0:
		return newConcurrency(o), nil
	case o.Adaptive != nil:
		return newAdaptive(o), nil
	default:
		return newAdaptiveRate(o)
	}
}

// engineProblems are an engine configuration's problems as limit reports
// them, each Field under prefix.
func engineProblems(prefix string, ps []*headroom.ConfigError) []error {
	errs := make([]error, len(ps))
	for i, p := range ps {
		errs[i] = &headroom.ConfigError{Package: "limit", Field: prefix + p.Field, Value: p.Value, Want: p.Want}
	}
	return errs
}
