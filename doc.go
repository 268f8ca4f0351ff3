// Package headroom holds what every package of the toolkit shares: the one
// error type for a bad configuration (ConfigError), the one backoff curve
// (Backoff) and the duration that reads JSON as "30s" (Duration).
//
// The toolkit itself lives in the packages below this one: limit (the
// limiters), limit/quota (the guard that reads published rate-limit
// headers), resilience (retries, budget, breaker, timeouts), httpx (the
// net/http layers), telemetry (OpenTelemetry metric names) and sim (the
// simulator).
package headroom
