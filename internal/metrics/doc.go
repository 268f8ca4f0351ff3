// Package metrics holds the recorders the rest of the module reports
// through, on the names package telemetry declares: a limiter's *Limiter,
// the quota guard's *Guard, the resilience runner's *Runner and its
// breaker's *Breaker, httpx's *HTTPClient and package fleet's *Fleet. A nil recorder records
// nothing. Recorders never fail their caller: an instrument that cannot be
// created is reported through otel.Handle, and the recorder records
// nothing.
//
// # Cost
//
// A Limiter's fast-path methods cost one atomic add and touch nothing of
// OpenTelemetry: counts live in striped atomics, and one callback per
// Limiter, registered with the meter, reads them when the meter collects,
// together with the figures its owner samples (Sample). Only Waited, on
// the slow path of a caller that queued, records on a synchronous
// histogram, without allocating.
//
// # Lifetime
//
// The registered callback keeps a Limiter reachable from the meter provider
// until Close unregisters it; an owner that may be dropped without being
// closed calls CloseWhenUnreachable. Neither the Limiter nor its sampler
// may reference the owner strongly.
package metrics
