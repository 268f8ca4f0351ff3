// Package httpx plugs headroom into net/http: RoundTripper layers for
// resilience, rate limits per host, the adaptive rate limiter and the quota
// guard, an ordering check, and clients built from JSON.
//
//	policy, err := resilience.HTTP(resilience.Options{}) // one per dependency; keep it
//	if err != nil {
//		return err
//	}
//	client, err := httpx.NewClient(
//		httpx.WithResilience(policy), // outer: makes the attempts
//		httpx.WithRateLimit(limit.Options{Adaptive: &adaptive.ConcurrencyConfig{Maximum: 200}, Name: "api"}),
//	)
//
// # Layers
//
// Layers run in the order they are listed, outermost first. Limiter layers go
// after WithResilience, inside the retry loop, where each attempt takes its
// own permit; the other order takes one permit for an operation that then
// makes several calls, and NewClient refuses it with a
// *headroom.ConfigError that names the fix.
//
//   - WithResilience(policy): one resilience.Run per request. Each attempt
//     gets the request body again from GetBody (a body without GetBody that
//     was already sent cannot be retried: *RewindError); a response the
//     runner may retry is read (up to 64 KiB) and its body closed before the
//     next attempt; Classify turns statuses into verdicts (429, 503 and
//     GitHub's 403 Throttled with the server's Retry-After, other 5xx
//     Transient). The server's last response is returned whatever its
//     status, its body the caller's to close, even when a limiter or the
//     guard refused the attempts after it; the attempt's context lives
//     until that body is closed or read to its end.
//   - WithRateLimit(limit.Options): a limiter of that shape per host, made on
//     first use (a bounded map that drops idle hosts: WithMaxHosts,
//     WithIdleTimeout), or one for all (WithSharedLimiter). Whether a
//     request finds no permit refused or waits its turn is the options'
//     QueueLimit, with each shape's own default (docs/queueing.md): the
//     resilience layer retries a refusal after its RetryAfter. Concurrency
//     permits are held until the response body is done.
//     With the AdaptiveRate shape, the throttle-driven adaptive rate
//     limiter on the AWS SDKs' adaptive-mode request path: Cost, wait,
//     send, WithThrottleClassifier, and the outcome back on the lease. A
//     throttle without a Retry-After is retried at once: the limiter has
//     slowed down, and the retry waits its turn in its queue.
//   - WithLimiter(limiter): a limiter of your own, shared by all hosts.
//   - WithQuotaGuard(quota.Options): reads the quotas servers publish in
//     their headers, in the units of the request's Cost, and holds an
//     attempt up to its deadline (or, with WithRefuseAtOnce, refuses it) while
//     the key has no room for it. Published figures win over learning: the
//     guard hands the quota to the request's adaptive rate limiter, which
//     then paces at its share of it. NewClient adds a guard with default
//     options as the innermost layer unless told WithoutQuotaGuard.
//
// Other options: WithTransport (the base, default http.DefaultTransport),
// WithClassifier, WithMeterProvider, and WithPriority.
//
// # Priorities
//
// Every layer reads a request's limit.Priority from its context
// (limit.WithPriority); WithPriority sets it from a function of the
// request instead, for a header or a route. Waiting requests go critical
// first and background last, and a guard given quota.Options.Reserves
// keeps a share of the published allowance back from the lower levels.
//
// A refusal by a limiter or the guard is a *limit.RateLimitedError; inside
// the resilience layer it is retried on the throttled curve after its
// RetryAfter, without charging the retry budget or the breaker.
//
// # Configuration
//
// ParseConfig reads a Config from JSON — resilience settings,
// named limiters, the limiter every host uses, per-host overrides, the quota
// guard — refusing unknown fields and listing every problem at once;
// Config.Options gives the options NewClient takes.
//
// # Errors
//
// Every configuration problem matches headroom.ErrConfig: a
// *headroom.ConfigError, whichever package found it, named after the field
// or the option; several are joined with errors.Join.
//
// # Telemetry
//
// Per-host limiters are named after limit.Options.Name (or their host) and
// their metrics carry server.address, server.port and headroom.layer (within
// WithMaxHostSeries hosts); the quota guard
// reports its keys and refusals; each attempt that reaches the base
// transport is timed as the semantic convention's
// http.client.request.duration. WithMeterProvider picks the provider.
package httpx
