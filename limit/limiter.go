package limit

import "context"

// A Limiter bounds what leaves this process. Every shape — per second, per
// window, concurrency, adaptive concurrency and adaptive rate — has this face.
//
// Acquire and AcquireN return a Lease on success. On refusal they return a
// *RateLimitedError (errors.Is(err, ErrRateLimited) holds) whose RetryAfter
// says when to come back. A call whose context has ended, before the call
// or while it waits in the queue, takes nothing, even when a permit is
// free: it returns ctx.Err() for a cancellation, and for a deadline a
// *RateLimitedError with telemetry.ReasonDeadline that also matches
// context.DeadlineExceeded (ContextEnded). A Limiter is safe for concurrent
// use.
type Limiter interface {
	// Acquire asks for one permit; it is AcquireN(ctx, 1).
	Acquire(ctx context.Context) (Lease, error)
	// AcquireN asks for cost permits (units). A cost of 0 is granted at once
	// and changes nothing; a negative cost, or one the limiter can never hold,
	// is refused at once with a *CostError.
	AcquireN(ctx context.Context, cost int) (Lease, error)
	// Name is the limiter's name, as it appears in errors and telemetry.
	Name() string
}
