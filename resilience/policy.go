package resilience

import (
	"time"

	"go.opentelemetry.io/otel/metric"

	"github.com/headroom-go/headroom/internal/metrics"
)

// Options configure a Policy. Build one from HTTPOptions or DefaultOptions
// and change what you need, or pass Option values to HTTP and Default.
// New validates it; the zero Options is valid and makes one attempt with no
// timeout, no breaker and no budget.
type Options struct {
	// Name names the policy in telemetry (AttrRunner); name it after the
	// dependency it guards.
	Name string

	// Retries is how many times a failed attempt may be retried: a call
	// makes at most 1 + Retries attempts. 0 or more.
	Retries int

	// Timeout bounds the whole call, attempts and delays together, measured
	// from when Run starts. 0 means none: only the caller's context bounds
	// the call. The overall deadline is the sooner of this and the caller's
	// context deadline; the runner never sleeps past it.
	Timeout time.Duration

	// AttemptTimeout bounds each attempt. The attempt's context ends at
	// min(AttemptTimeout, time left on the overall deadline) and is linked
	// with the caller's. An attempt that runs out its own timeout is
	// Transient (*TimeoutError). 0 means none. At most Timeout.
	AttemptTimeout time.Duration

	// Backoff is the curve for Transient failures.
	Backoff Backoff

	// ThrottledBackoff is the curve for Throttled ones: longer, because the
	// dependency (or our own limiter) is defending itself. A Verdict's
	// RetryAfter replaces it.
	ThrottledBackoff Backoff

	// MaximumDelay caps every delay, a RetryAfter hint included (as is
	// the time left on the deadline; Polly does not cap a Retry-After, we
	// do). 0 means no cap.
	MaximumDelay time.Duration

	// Classify maps an attempt's error to a verdict; nil means
	// DefaultClassify.
	Classify Classifier

	// Breaker, if not nil, guards the dependency. Share one per dependency.
	Breaker *Breaker

	// Budget, if not nil, bounds retries as a fraction of the dependency's
	// traffic. Share one per dependency.
	Budget *Budget

	// MeterProvider receives the runner's metrics; nil means the global
	// meter provider.
	MeterProvider metric.MeterProvider
}

// The presets' values and where they come from: Polly v8 and
// Microsoft.Extensions.Http.Resilience's standard pipeline, Finagle's retry
// budget, cenkalti/backoff/v4, and the exponential backoff that rate-limited
// APIs (GitHub, Microsoft Graph) ask of throttled clients.
const (
	// HTTPRetries: MaxRetryAttempts 3, 4 tries in all
	// (HttpRetryStrategyOptions).
	HTTPRetries = 3
	// HTTPTimeout: the standard pipeline's TotalRequestTimeout, 30 s.
	HTTPTimeout = 30 * time.Second
	// HTTPAttemptTimeout: the standard pipeline's AttemptTimeout, 10 s.
	HTTPAttemptTimeout = 10 * time.Second
	// MaximumDelay caps every delay: 60 s, a minute being the longest a
	// caller with a 30 s deadline could ever use. Polly's MaxDelay is unset
	// by default.
	MaximumDelay = 60 * time.Second
	// DefaultRetries: Polly's RetryStrategyOptions.MaxRetryAttempts, 3.
	DefaultRetries = 3
)

// HTTPBackoff is the Transient curve of HTTP: Polly's standard retry is
// exponential from Delay 2 s with jitter (HttpRetryStrategyOptions: Delay
// 2 s, BackoffType Exponential, UseJitter true), so 2 s, 4 s, 8 s. Polly's
// exponential jitter is "decorrelated jitter V2", which cenkalti/backoff
// does not offer; we use ±25 %, Polly's jitter for its constant and linear
// curves.
var HTTPBackoff = Backoff{Initial: 2 * time.Second, Multiplier: 2, Jitter: 0.25}

// ThrottledBackoff is the Throttled curve of both presets: it doubles each
// time (multiplier 2), with 20 % jitter, up to 60 s. It starts at 4 s, twice
// HTTPBackoff's start (our choice), so at every step a throttle waits
// longer than a transient failure would.
var ThrottledBackoff = Backoff{Initial: 4 * time.Second, Multiplier: 2, Jitter: 0.2, Max: 60 * time.Second}

// DefaultBackoff is the Transient curve of Default: cenkalti/backoff/v4's
// own defaults (DefaultInitialInterval 500 ms, DefaultMultiplier 1.5,
// DefaultRandomizationFactor 0.5, DefaultMaxInterval 60 s).
var DefaultBackoff = Backoff{Initial: 500 * time.Millisecond, Multiplier: 1.5, Jitter: 0.5, Max: 60 * time.Second}

// HTTPBreakerOptions are the breaker options of HTTP and Default: the
// standard pipeline's circuit breaker, which is Polly's default (failure
// ratio 0.1 over at least 100 calls in 30 s, open 5 s).
func HTTPBreakerOptions(name string) BreakerOptions {
	return BreakerOptions{
		Name:              name,
		FailureRatio:      DefaultFailureRatio,
		MinimumThroughput: DefaultMinimumThroughput,
		SamplingDuration:  DefaultSamplingDuration,
		BreakDuration:     DefaultBreakDuration,
	}
}

// DefaultBudgetOptions are Finagle's RetryBudget defaults: a 10 s window,
// 10 retries a second as a floor, and 20 % of calls.
func DefaultBudgetOptions() BudgetOptions {
	return BudgetOptions{TTL: DefaultBudgetTTL, MinRetriesPerSecond: DefaultMinRetriesPerSecond, Ratio: DefaultRetryRatio}
}

// HTTPOptions returns the options of HTTP, with a new Breaker and Budget:
//
//	Name              "http"
//	Retries           3      (Polly: MaxRetryAttempts 3)
//	Timeout           30 s   (Polly: TotalRequestTimeout)
//	AttemptTimeout    10 s   (Polly: AttemptTimeout)
//	Backoff           2 s × 2ⁿ ± 25 %            (Polly: Delay 2 s, exponential, jitter)
//	ThrottledBackoff  4 s × 2ⁿ ± 20 %, ≤ 60 s
//	MaximumDelay      60 s
//	Breaker           ratio 0.1, ≥ 100 calls in 30 s, open 5 s (Polly)
//	Budget            20 % of calls + 10/s over 10 s (Finagle)
//	Classify          DefaultClassify
//
// Polly's standard pipeline also holds a rate limiter (1000 concurrent);
// here limiters go inside the callback, one permit per attempt.
func HTTPOptions() Options { return adjust(httpBase(), nil) }

func httpBase() Options {
	return Options{
		Name:             "http",
		Retries:          HTTPRetries,
		Timeout:          HTTPTimeout,
		AttemptTimeout:   HTTPAttemptTimeout,
		Backoff:          HTTPBackoff,
		ThrottledBackoff: ThrottledBackoff,
		MaximumDelay:     MaximumDelay,
	}
}

// DefaultOptions returns the options of Default, with a new Breaker and
// Budget: as HTTPOptions, but named "default", with no timeouts of its own
// (the caller's context bounds the call, as with Polly's bare retry) and
// the Transient curve DefaultBackoff (500 ms × 1.5ⁿ ± 50 %, ≤ 60 s).
func DefaultOptions() Options { return adjust(defaultBase(), nil) }

func defaultBase() Options {
	return Options{
		Name:             "default",
		Retries:          DefaultRetries,
		Backoff:          DefaultBackoff,
		ThrottledBackoff: ThrottledBackoff,
		MaximumDelay:     MaximumDelay,
	}
}

// An Option adjusts a preset. See HTTP and Default.
type Option func(*preset)

// preset is a preset's options being adjusted, with whether to build its
// own breaker and budget once the options are known.
type preset struct {
	o                   Options
	noBreaker, noBudget bool
}

// WithName names the policy (and the preset's breaker) in telemetry.
func WithName(name string) Option { return func(p *preset) { p.o.Name = name } }

// WithRetries sets Options.Retries.
func WithRetries(n int) Option { return func(p *preset) { p.o.Retries = n } }

// WithTimeout sets Options.Timeout.
func WithTimeout(d time.Duration) Option { return func(p *preset) { p.o.Timeout = d } }

// WithAttemptTimeout sets Options.AttemptTimeout.
func WithAttemptTimeout(d time.Duration) Option {
	return func(p *preset) { p.o.AttemptTimeout = d }
}

// WithBackoff sets the Transient curve, Options.Backoff.
func WithBackoff(b Backoff) Option { return func(p *preset) { p.o.Backoff = b } }

// WithThrottledBackoff sets the Throttled curve, Options.ThrottledBackoff.
func WithThrottledBackoff(b Backoff) Option {
	return func(p *preset) { p.o.ThrottledBackoff = b }
}

// WithMaximumDelay sets Options.MaximumDelay.
func WithMaximumDelay(d time.Duration) Option { return func(p *preset) { p.o.MaximumDelay = d } }

// WithClassifier sets Options.Classify.
func WithClassifier(c Classifier) Option { return func(p *preset) { p.o.Classify = c } }

// WithBreaker uses b instead of the preset's own breaker; nil means none.
func WithBreaker(b *Breaker) Option {
	return func(p *preset) { p.o.Breaker, p.noBreaker = b, true }
}

// WithBudget uses b instead of the preset's own budget; nil means none.
func WithBudget(b *Budget) Option {
	return func(p *preset) { p.o.Budget, p.noBudget = b, true }
}

// WithMeterProvider sends the policy's (and the preset breaker's) metrics
// to mp.
func WithMeterProvider(mp metric.MeterProvider) Option {
	return func(p *preset) { p.o.MeterProvider = mp }
}

// adjust applies opts to a preset's base options and gives the result its
// own breaker, named after the policy and reporting where it does, and its
// own budget, unless opts replaced them.
func adjust(base Options, opts []Option) Options {
	p := preset{o: base}
	for _, opt := range opts {
		if opt != nil {
			opt(&p)
		}
	}
	if !p.noBreaker {
		bo := HTTPBreakerOptions(p.o.Name)
		bo.MeterProvider = p.o.MeterProvider
		p.o.Breaker, _ = NewBreaker(bo) // valid: the preset's own options
	}
	if !p.noBudget {
		p.o.Budget, _ = NewBudget(DefaultBudgetOptions()) // valid: Finagle's defaults
	}
	return p.o
}

// build is HTTP and Default: an invalid policy carries its error (Policy.Err).
func build(base Options, opts []Option) *Policy {
	pol, _ := New(adjust(base, opts))
	return pol
}

// HTTP returns a new policy with the options of HTTPOptions, adjusted by
// opts, and its own breaker and budget (unless opts replace them). Make one
// per dependency and keep it: the breaker and the budget are its memory.
//
// HTTP never fails: if opts make the options invalid, every Run with the
// policy returns the validation error (see Policy.Err).
func HTTP(opts ...Option) *Policy { return build(httpBase(), opts) }

// Default returns a new policy with the options of DefaultOptions,
// adjusted by opts: the general preset for calls that are not HTTP. Like
// HTTP, it never fails and is meant to be kept, one per dependency.
func Default(opts ...Option) *Policy { return build(defaultBase(), opts) }

// A Policy is how Run calls a dependency: retries, curves, timeouts,
// breaker and budget. It is immutable and safe for concurrent use; build it
// once per dependency with New, HTTP or Default.
type Policy struct {
	o        Options
	err      error
	classify Classifier
	tel      *metrics.Runner
}

// New returns a policy with options o and o's validation error. The policy
// is never nil: an invalid one refuses every Run with that error, so a
// caller that ignores the error still fails loudly, not silently.
func New(o Options) (*Policy, error) {
	p := &Policy{o: o, err: o.Validate(), classify: o.Classify}
	if p.classify == nil {
		p.classify = DefaultClassify
	}
	if p.err == nil {
		p.tel = metrics.NewRunner(o.MeterProvider, o.Name)
	}
	return p, p.err
}

// Err is the policy's validation error, or nil.
func (p *Policy) Err() error { return p.err }

// Options returns the policy's options.
func (p *Policy) Options() Options { return p.o }

// Breaker is the policy's breaker, or nil.
func (p *Policy) Breaker() *Breaker { return p.o.Breaker }

// Budget is the policy's retry budget, or nil.
func (p *Policy) Budget() *Budget { return p.o.Budget }
