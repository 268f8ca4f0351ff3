// Package concurrency holds the bulkhead engine behind limit.Concurrency: a
// number of slots, a limit on how many may be held at once, and nothing
// else.
//
// Taking permits is the refuse-at-once verb every engine of headroom has:
// TryAcquire(now, cost) takes cost permits or refuses. It reads nothing of
// now and names no wait (retryAfter 0), since when a holder releases is not
// the engine's to know.
// The engine never blocks, reads no clock and starts no goroutine. Waiting,
// FIFO queueing and context cancellation belong to the shells in package
// limit, which call TryAcquire on their fast path and hand released slots to
// their queued callers. New reports a bad limit as a *headroom.ConfigError
// of package "concurrency".
package concurrency
