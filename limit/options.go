package limit

import (
	"cmp"
	"fmt"
	"log/slog"
	"math"
	"strconv"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/concurrency"
	"github.com/headroom-go/headroom/limit/window"
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

	// QueueLimit is how many permits' (units') worth of callers may wait,
	// in FIFO order, for every shape: 0 refuses at once with a RetryAfter
	// instead, for callers that would rather do something else. nil means
	// the shape's default, the one the table in docs/queueing.md lists: 0
	// for PerSecond, PerWindow, Concurrency and Adaptive, 500 for
	// AdaptiveRate. PerSecond spreads the RetryAfter of callers refused
	// together so that they come back one after another; the other shapes
	// cannot tell when each permit frees, and callers they refuse together
	// come back together, where most are refused again. Give a limiter that
	// many goroutines share a queue.
	QueueLimit *int `json:"queueLimit,omitempty"`

	// Name names the limiter in errors and telemetry.
	Name string `json:"name,omitempty"`

	// MeterProvider receives the limiter's metrics; nil means the global one.
	MeterProvider metric.MeterProvider `json:"-"`

	// Logger receives the limiter's notable events: a pause after a
	// Retry-After at Info, a cut of an adaptive limit at Debug, repeats
	// summarised once a minute. nil logs nothing; a limiter in healthy
	// full use logs nothing above Debug.
	Logger *slog.Logger `json:"-"`

	// Attributes are added to every measurement the limiter records, after
	// headroom.limiter and headroom.limiter.kind; the HTTP layer adds
	// the host's server.address and server.port this way.
	Attributes []attribute.KeyValue `json:"-"`
}

// WindowOptions is the sliding-window shape.
type WindowOptions struct {
	Permits int               `json:"permits"`
	Window  headroom.Duration `json:"window"`
	// Segments is how finely the window slides; 0 means 8.
	Segments int `json:"segments,omitempty"`
}

// defaultRateQueueLimit is the adaptive rate limiter's queue when
// Options.QueueLimit is nil: 500 units, as the specification of its
// admission gives it; every other shape refuses at once by default.
const defaultRateQueueLimit = 500

// queueLimit is QueueLimit, or the shape's default when it is nil.
func (o *Options) queueLimit() int {
	switch {
	case o.QueueLimit != nil:
		return *o.QueueLimit
	case o.AdaptiveRate != nil:
		return defaultRateQueueLimit
	}
	return 0
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
	l := problems.New("limit")
	o.check(l)
	return l.Err()
}

// check records o's problems on l.
func (o *Options) check(l *problems.List) {
	shapes := o.shapes()
	switch len(shapes) {
	case 0:
		l.Add("Options", "no shape", "exactly one of PermitsPerSecond, PerWindow, Concurrency, Adaptive or AdaptiveRate")
	case 1:
	default:
		l.Add("Options", shapes, "exactly one shape; the others would silently lose")
	}
	o.checkBucket(l)
	if o.PerWindow != nil {
		o.PerWindow.check(l.At("PerWindow"))
	}
	if o.Concurrency < 0 || o.Concurrency > concurrency.MaxLimit {
		l.Add("Concurrency", o.Concurrency, "1 to "+strconv.Itoa(concurrency.MaxLimit)+": the bulkhead keeps a slot of 8 bytes a permit")
	}
	if c := o.Adaptive; c != nil {
		if c.Maximum > math.MaxInt32 {
			l.Add("Adaptive.Maximum", c.Maximum, "at most "+strconv.Itoa(math.MaxInt32)+": a lease holds its cost in an int32")
		}
		problems.Check(l.At("Adaptive"), c)
	}
	if o.AdaptiveRate != nil {
		problems.Check(l.At("AdaptiveRate"), o.AdaptiveRate)
	}
	if q := o.QueueLimit; q != nil && *q < 0 {
		l.Add("QueueLimit", *q, "0 (refuse at once) or more")
	}
}

// checkBucket records the problems of the token bucket's settings on l.
func (o *Options) checkBucket(l *problems.List) {
	rate, burst := o.PermitsPerSecond, o.Burst
	bad := l.Len()
	if rate < 0 || rate != rate {
		l.Add("PermitsPerSecond", rate, "a rate above 0")
	}
	if rate > maxPermitsPerSecond {
		l.Add("PermitsPerSecond", rate, "at most 1e9 (one permit a nanosecond)")
	}
	if burst < 0 || burst > maxBurst {
		l.Add("Burst", burst, "0 (1) up to 1e9")
	}
	if burst != 0 && rate == 0 {
		l.Add("Burst", burst, "0: Burst belongs to the PermitsPerSecond shape")
	}
	if l.Len() > bad || rate == 0 {
		return
	}
	// Within these bounds the bucket still refuses to span more than it
	// can count: a full bucket must refill within 2^60 ns.
	one, err := window.NewTokenBucket(rate, 1)
	if err != nil {
		l.Add("PermitsPerSecond", rate, "at least one permit in 2^60 ns (about 36 years)")
		return
	}
	if _, err := window.NewTokenBucket(rate, max(burst, 1)); err != nil {
		most := (1 << 60) / int64(one.Interval())
		l.Add("Burst", burst, fmt.Sprintf("at most %d at this rate: a full bucket refills within 2^60 ns (about 36 years)", most))
	}
}

// Validate returns every problem with w at once, joined with errors.Join;
// each is an *headroom.ConfigError. It returns nil when PerWindow would
// build the window w describes.
func (w *WindowOptions) Validate() error {
	l := problems.New("limit")
	w.check(l)
	return l.Err()
}

// check records w's problems on l.
func (w *WindowOptions) check(l *problems.List) {
	if w.Permits <= 0 {
		l.Add("Permits", w.Permits, "1 or more")
	}
	if w.Window <= 0 {
		l.Add("Window", w.Window, "a duration above 0, such as \"1m\"")
	}
	switch segments := cmp.Or(w.Segments, defaultSegments); {
	case w.Segments < 0:
		l.Add("Segments", w.Segments, "0 (8 segments) or more")
	case w.Segments > maxSegments:
		l.Add("Segments", w.Segments, "at most "+strconv.Itoa(maxSegments))
	case w.Window > 0 && int64(segments) > int64(w.Window):
		l.Add("Segments", w.Segments, fmt.Sprintf("at most one segment a nanosecond of Window: at most %d (0 means 8)", int64(w.Window)))
	}
}

// The check of the options other packages' options hold.
func init() { problems.Register((*Options).check) }

// New builds the limiter o describes, or returns Validate's error.
func New(o Options) (Limiter, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	switch {
	case o.PermitsPerSecond != 0:
		return built(newPerSecond(o))
	case o.PerWindow != nil:
		return built(newPerWindow(o))
	case o.Concurrency != 0:
		return built(newConcurrency(o))
	case o.Adaptive != nil:
		return built(newAdaptiveLimiter(o))
	default:
		return built(newAdaptiveRateLimiter(o))
	}
}

// built is what New returns for a limiter a constructor built, or its
// error: never a nil *T in a non-nil Limiter. The engines' constructors
// check what Validate has checked already, so their errors are only passed
// on in case the two ever disagree.
func built[T Limiter](l T, err error) (Limiter, error) {
	if err != nil {
		return nil, err
	}
	return l, nil
}
