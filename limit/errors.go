package limit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/headroom-go/headroom/telemetry"
)

// ErrRateLimited is what every refusal matches: errors.Is(err, ErrRateLimited).
var ErrRateLimited = errors.New("rate limited")

// RateLimitedError is a limiter's refusal: a throttle that never left the
// process. RetryAfter is when a permit is expected to be free (exact for the
// token bucket and the sliding window), or 0 when the limiter cannot tell.
type RateLimitedError struct {
	Limiter    string
	RetryAfter time.Duration
	// Reason says why: telemetry.ReasonNoPermit, telemetry.ReasonQueueFull,
	// telemetry.ReasonMaxWait or telemetry.ReasonDeadline, the values the telemetry reports
	// the denial with.
	Reason string
}

func (e *RateLimitedError) Error() string {
	s := "limit: " + e.Limiter + ": rate limited"
	if e.Reason != "" {
		s += " (" + e.Reason + ")"
	}
	if e.RetryAfter > 0 {
		s += "; retry after " + e.RetryAfter.String()
	}
	return s
}

// Is makes errors.Is(err, ErrRateLimited) hold for every refusal, and
// errors.Is(err, context.DeadlineExceeded) for one with telemetry.ReasonDeadline:
// a deadline the limiter foresees, one that ends the wait in the queue and
// one that had passed before the call are one refusal.
func (e *RateLimitedError) Is(target error) bool {
	return target == ErrRateLimited || target == context.DeadlineExceeded && e.Reason == telemetry.ReasonDeadline
}

// ErrCost is what a *CostError matches.
var ErrCost = errors.New("cost can never be granted")

// CostError refuses a request that no wait could satisfy: a negative cost,
// or one above what the limiter can ever hold. Retrying it is pointless.
type CostError struct {
	Limiter  string
	Cost     int
	Capacity int
}

func (e *CostError) Error() string {
	if e.Cost < 0 {
		return fmt.Sprintf("limit: %s: cost %d is negative; ask for 0 or more permits", e.Limiter, e.Cost)
	}
	return fmt.Sprintf("limit: %s: cost %d is above the %d permits this limiter can ever hold; ask for at most %d, or raise its capacity", e.Limiter, e.Cost, e.Capacity, e.Capacity)
}

// Is makes errors.Is(err, ErrCost) hold.
func (e *CostError) Is(target error) bool { return target == ErrCost }

// ContextEnded is the error of a call to a limiter whose context has
// ended, before it began or while it waited: ctx.Err() as it is for a
// cancellation; for a deadline a refusal of the limiter's, a
// *RateLimitedError with telemetry.ReasonDeadline that also matches
// context.DeadlineExceeded, so that a retry runner reads a wait that ran
// out its attempt's time as a self-imposed throttle and not as the
// dependency's timeout. A deadline that has passed by the clock is one
// even before the context's timer has fired (a loaded machine, or a
// network poller that saw it first, can be ahead of the timer). It is nil
// while ctx has not ended. Every limiter of the module, the quota guard and
// the fleet's included, ends so: a call whose context has ended takes
// nothing, even when a permit is free.
func ContextEnded(ctx context.Context, limiter string) error {
	err := ctx.Err()
	if err == nil {
		if dl, ok := ctx.Deadline(); !ok || time.Now().Before(dl) {
			return nil
		}
	} else if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &RateLimitedError{Limiter: limiter, Reason: telemetry.ReasonDeadline}
}
