package httpx

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
)

// An Option configures a client or transport built by NewClient or
// NewTransport. The layer options — WithResilience, WithRateLimit,
// WithLimiter and WithQuotaGuard — add a layer each, in the order they are
// listed, outermost first; the others may come anywhere.
type Option func(*builder)

type layerKind uint8

const (
	resilienceKind layerKind = iota
	limiterKind
	guardKind
)

type layer struct {
	kind  layerKind
	name  string // the option, for errors
	build func(b *builder, next http.RoundTripper) (http.RoundTripper, error)
}

type builder struct {
	base     http.RoundTripper
	layers   []layer
	noGuard  bool
	shared   SharedQuota
	classify ResponseClassifier
	mp       metric.MeterProvider
	priority func(*http.Request) limit.Priority
	t        *Transport
	// maxHostSeries and series bound the per-host series (WithMaxHostSeries).
	maxHostSeries int
	series        *metrics.HostSeries
	// logger receives the client's events (WithLogger); events writes them.
	logger *slog.Logger
	events *metrics.Events
	// noDuration leaves out http.client.request.duration
	// (WithoutRequestDuration).
	noDuration bool
}

func (b *builder) meterProvider(mp metric.MeterProvider) metric.MeterProvider {
	if mp != nil {
		return mp
	}
	return b.mp
}

// WithTransport sets the transport the layers send through; the default is
// http.DefaultTransport.
func WithTransport(rt http.RoundTripper) Option { return func(b *builder) { b.base = rt } }

// WithMeterProvider sends the metrics of the limiters the layers make to
// mp, unless their options name a provider of their own; nil, the default,
// means the global one.
func WithMeterProvider(mp metric.MeterProvider) Option { return func(b *builder) { b.mp = mp } }

// WithMaxHostSeries bounds how many hosts have series of their own in the
// client's metrics (default 100): the first n host names the client meets
// are labelled with their server.address (and server.port) for the life
// of the client, and every later one counts in one series labelled
// server.address "_other" (telemetry.OtherHosts) instead, whose counts and
// waits add up those hosts' and which reports no limit, queue or quota
// gauges, since those of several hosts do not add up. A client calling
// any number of hosts thus makes a bounded number of series, which
// docs/telemetry.md tabulates, and never reaches the SDK's cardinality
// limit, where every label would be lost. It bounds series, not limiters:
// WithMaxHosts bounds those.
func WithMaxHostSeries(n int) Option { return func(b *builder) { b.maxHostSeries = n } }

// WithLogger sends the client's notable events to l: a throttle answered by
// a server, with its Retry-After, at Info; an attempt the quota guard held
// longer than a second, at Info; and, through the limiters the layers make
// (unless their options name a logger of their own), their pauses and
// cuts. Repeats of one event for one host are summarised once a minute,
// so that a storm of 429s makes a line a minute. A client in healthy full
// use, never throttled, logs nothing above Debug. nil, the default, logs
// nothing.
func WithLogger(l *slog.Logger) Option { return func(b *builder) { b.logger = l } }

// WithoutRequestDuration leaves out the client's own
// http.client.request.duration. Use it when the base transport records
// that metric already, as otelhttp.NewTransport does: both would time the
// same attempts, as two series that differ only in their instrumentation
// scope, and a sum over them counts every attempt twice.
func WithoutRequestDuration() Option { return func(b *builder) { b.noDuration = true } }

// WithClassifier replaces Classify as the resilience layer's response
// classifier.
func WithClassifier(c ResponseClassifier) Option { return func(b *builder) { b.classify = c } }

// WithResilience adds the resilience layer: every request is one run of p
// (resilience.Run), each attempt a trip through the layers listed after it.
// Limiter layers go after it, so that each attempt takes its own permit.
//
// The layer rewinds the request body for each attempt with GetBody (see
// RewindError); reads the body of a response it may retry, up to 64 KiB, and
// closes it when the next attempt starts; classifies responses with Classify
// (or WithClassifier); and returns the last response as any transport does,
// whatever its status, with its body the caller's to close. The attempt's
// context lives until that body is closed or read to its end, so the
// attempt's timeout (p's AttemptTimeout) bounds reading the body too, as
// http.Client.Timeout does. A request body without GetBody serves attempts
// only until one sends it; once that attempt's response is returned, the
// body is its transport's, which may go on sending it (a full-duplex
// exchange) and closes it when done.
func WithResilience(p *resilience.Policy) Option {
	return func(b *builder) {
		b.layers = append(b.layers, layer{kind: resilienceKind, name: "WithResilience",
			build: func(b *builder, next http.RoundTripper) (http.RoundTripper, error) {
				if p == nil {
					l := problems.New("httpx")
					l.Add("WithResilience", nil, "a policy, such as resilience.HTTP(resilience.Options{})'s")
					return nil, l.Err()
				}
				c := b.classify
				if c == nil {
					c = Classify
				}
				return &resilienceLayer{next: next, policy: p, classify: c}, nil
			}})
	}
}

// WithRateLimit adds a rate-limit layer of the shape o describes (exactly
// one shape; see limit.Options): one limiter per host by default, made on
// the host's first request, or one for every host with WithSharedLimiter.
// Each attempt
// takes a permit of Cost units (default 1). When none is free the shape's
// queue setting decides, as anywhere else (limit.Options.QueueLimit; the
// table in docs/queueing.md): the rate and concurrency shapes refuse at
// once, and the resilience layer retries after the refusal's RetryAfter;
// give QueueLimit to have requests wait their turn in FIFO order up to
// their deadline instead. A concurrency permit (shapes
// Concurrency and Adaptive) is held until the response body is closed or
// read to its end, others until the response arrives. List it after
// WithResilience.
//
// What the response says goes back on the lease: a throttle (by default a
// 429, or a 503 with a Retry-After; WithThrottleClassifier) with the
// server's Retry-After, which cuts an adaptive rate limiter's rate and may
// pause it; Drop for another 503 and a timeout, the adaptive concurrency
// limit's queueing signals; Ignore for another 5xx and a network error;
// otherwise a success. With the AdaptiveRate shape this is the request path
// of the AWS SDKs' adaptive retry mode: estimate the cost, wait for the
// units in FIFO order (its queue holds 500 units by default), send, and
// report; its throttles without a Retry-After are retried at once, since
// the limiter has slowed down and the retry waits its turn in its queue.
//
// Per-host limiters are named o.Name, or after their host, and their
// metrics carry the host's server.address (and server.port when the host
// names one) and headroom.layer, within WithMaxHostSeries.
func WithRateLimit(o limit.Options, opts ...LimiterOption) Option {
	return limiterOption("WithRateLimit", opts, func(c *limiterConfig, b *builder) (*hostSet, error) {
		if err := o.Validate(); err != nil {
			return nil, err
		}
		return newHostSet(c, minIdle(o), func(host string) *hostEntry { return b.hostLimiter(o, host) }), nil
	})
}

// WithLimiter adds a limiter layer over a limiter you made and own, shared by
// every host: the layer neither closes it nor names it. Its permits are held
// until the response arrives; pass a concurrency limiter to WithRateLimit
// instead to hold them until the body is done. List it after WithResilience.
func WithLimiter(l limit.Limiter, opts ...LimiterOption) Option {
	return limiterOption("WithLimiter", opts, func(c *limiterConfig, b *builder) (*hostSet, error) {
		if l == nil {
			l := problems.New("httpx")
			l.Add("WithLimiter", nil, "a limiter")
			return nil, l.Err()
		}
		c.shared = true
		s := newHostSet(c, 0, func(string) *hostEntry { return &hostEntry{lim: l} })
		s.owned = false
		return s, nil
	})
}

func limiterOption(name string, opts []LimiterOption, mk func(*limiterConfig, *builder) (*hostSet, error)) Option {
	return func(b *builder) {
		b.layers = append(b.layers, layer{kind: limiterKind, name: name,
			build: func(b *builder, next http.RoundTripper) (http.RoundTripper, error) {
				var c limiterConfig
				for _, o := range opts {
					o(&c)
				}
				s, err := mk(&c, b)
				if err != nil {
					return nil, err
				}
				b.t.hosts = append(b.t.hosts, s)
				return &limiterLayer{next: next, hosts: s, cost: c.cost, throttle: c.throttle}, nil
			}})
	}
}

// WithQuotaGuard places the quota guard, configured by o, where it is
// listed; it must come after WithResilience, whose retries wait out its
// refusals. Unless o.Key says otherwise, the guard keys requests by host as
// the limiter layers do (see WithHostKey): in lower case, without the scheme's
// default port. Without this option NewClient and NewTransport add a guard with
// quota.Options{} as the innermost layer; WithoutQuotaGuard leaves it out.
func WithQuotaGuard(o quota.Options) Option {
	return func(b *builder) {
		b.layers = append(b.layers, guardLayerSpec("WithQuotaGuard", o))
	}
}

// WithoutQuotaGuard leaves out the quota guard NewClient adds by default.
func WithoutQuotaGuard() Option { return func(b *builder) { b.noGuard = true } }

// A SharedQuota is a view of published quotas that several processes share,
// such as fleet.SharedQuota on Redis. The quota guard layer reserves each
// attempt's units from it, after its own guard admits the attempt, and hands
// it what each response published, so that what one process learns every
// process sees and N processes cannot all spend one remaining allowance.
type SharedQuota interface {
	// Acquire reserves cost units of key's shared allowance for an
	// attempt, or refuses (a *limit.RateLimitedError, which the
	// resilience layer waits out) or fails as the view's failure policy
	// says.
	Acquire(ctx context.Context, key string, cost int) error
	// Observe takes what a response for key published, read at now.
	Observe(ctx context.Context, key string, r quota.Response, now time.Time) error
}

// WithSharedQuota makes every quota guard layer of the client consult s as
// well as its own guard: see SharedQuota. Without a quota guard layer it has
// nothing to do.
func WithSharedQuota(s SharedQuota) Option { return func(b *builder) { b.shared = s } }

func guardLayerSpec(name string, o quota.Options) layer {
	return layer{kind: guardKind, name: name,
		build: func(b *builder, next http.RoundTripper) (http.RoundTripper, error) {
			o := o
			if o.Key == nil {
				o.Key = hostKey // as the limiter layers key hosts
				if o.KeyAttributes == nil {
					o.KeyAttributes = func(key string) []attribute.KeyValue { return b.series.Labels(metrics.SplitPort(key)) }
				}
			}
			o.MeterProvider = b.meterProvider(o.MeterProvider)
			g, err := quota.New(o)
			if err != nil {
				return nil, err
			}
			if b.t.guard == nil {
				b.t.guard = g
			}
			return &guardLayer{next: next, g: g, shared: b.shared, events: b.events}, nil
		}}
}

// Transport is the RoundTripper NewTransport builds: the layers over a base
// transport.
type Transport struct {
	rt    http.RoundTripper
	base  http.RoundTripper
	guard *quota.Guard // the first quota guard layer's
	hosts []*hostSet   // the limiter layers'
	// closers release what the layers made beyond their host sets: the
	// limiters a configuration shares between hosts.
	closers []func()
}

// RoundTrip sends req through the layers, outermost first.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) { return t.rt.RoundTrip(req) }

// CloseIdleConnections closes the base transport's idle connections, if it
// has a CloseIdleConnections method; http.Client.CloseIdleConnections calls
// it.
func (t *Transport) CloseIdleConnections() {
	if c, ok := t.base.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// Close releases the limiters the layers made: their metrics and timers.
// Requests in flight finish; the transport must not be used afterwards. It
// leaves the base transport alone (see CloseIdleConnections).
func (t *Transport) Close() error {
	for _, s := range t.hosts {
		if s.owned {
			s.close()
		}
	}
	for _, c := range t.closers {
		c()
	}
	t.hosts, t.closers = nil, nil
	return nil
}

// NewTransport builds the layers the options list, outermost first, over the
// base transport, and checks them: a limiter layer (WithRateLimit,
// WithLimiter, WithQuotaGuard) listed before
// WithResilience is refused (layers run in the order they are listed,
// outermost first, so such a limiter would be outside the retries); two
// resilience layers, a nil
// policy and every invalid option are refused too, all problems at once
// (errors.Join). Unless WithoutQuotaGuard is given or WithQuotaGuard places
// it, a quota guard with default options is the innermost layer.
func NewTransport(opts ...Option) (*Transport, error) {
	b := &builder{t: &Transport{}}
	for _, o := range opts {
		o(b)
	}
	if b.base == nil {
		b.base = http.DefaultTransport
	}
	b.series = metrics.NewHostSeries(b.maxHostSeries)
	b.events = metrics.NewEvents(b.logger)
	layers := b.layers
	hasGuard := false
	for _, l := range layers {
		hasGuard = hasGuard || l.kind == guardKind
	}
	if !hasGuard && !b.noGuard {
		layers = append(layers[:len(layers):len(layers)], guardLayerSpec("the default quota guard", quota.Options{}))
	}

	l := problems.New("httpx")
	res := -1
	for i, layer := range layers {
		if layer.kind == resilienceKind {
			if res >= 0 {
				l.Add("WithResilience", "listed twice", "one resilience layer: nested runs multiply the attempts")
				continue
			}
			res = i
		}
	}
	if res >= 0 {
		for _, layer := range layers[:res] {
			if layer.kind != resilienceKind {
				l.Add(layer.name, "listed before WithResilience", "after WithResilience, inside the retries (outside them one permit covers every attempt, and a refusal is never retried)")
			}
		}
	}

	// Build from the innermost out.
	t := b.t
	t.base = b.base
	d := &durationLayer{next: b.base, events: b.events}
	if !b.noDuration {
		d.m = metrics.NewHTTPClient(b.mp, b.series)
	}
	var rt http.RoundTripper = d
	for i := len(layers) - 1; i >= 0; i-- {
		next, err := layers[i].build(b, rt)
		if err != nil {
			l.Error(err)
			continue
		}
		rt = next
	}
	if err := l.Err(); err != nil {
		t.Close()
		return nil, err
	}
	if b.priority != nil {
		rt = &priorityLayer{next: rt, priority: b.priority}
	}
	t.rt = rt
	return t, nil
}

// NewClient returns an *http.Client whose transport is NewTransport(opts...);
// see there for the checks. Its Timeout is 0: the resilience policy bounds
// each call. A client that lives as long as the program needs nothing more;
// one that is dropped earlier should release its limiters' metrics and
// timers with client.Transport.(*httpx.Transport).Close(), or be built from
// NewTransport, which keeps the *Transport in hand.
//
//	client, err := httpx.NewClient(
//		httpx.WithResilience(policy), // policy, err := resilience.HTTP(resilience.Options{})
//		httpx.WithRateLimit(limit.Options{Adaptive: &adaptive.ConcurrencyConfig{Maximum: 200}, Name: "api"}),
//	)
func NewClient(opts ...Option) (*http.Client, error) {
	t, err := NewTransport(opts...)
	if err != nil {
		return nil, err
	}
	return &http.Client{Transport: t}, nil
}
