// Package concurrency holds the bulkhead engine behind limit.Concurrency and
// the latency-adaptive limit: a number of slots, a limit on how many may be
// held at once, and nothing else.
//
// The engine never blocks, reads no clock and starts no goroutine. Waiting,
// FIFO queueing and context cancellation belong to the shells in package
// limit, which call TryAcquire on their fast path and hand released slots to
// their queued callers.
package concurrency
