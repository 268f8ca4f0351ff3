package limit_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// tickets is a Limiter written outside the package: a fixed stock of
// tickets, each handed out on a lease and returned when the lease is
// released.
type tickets struct {
	left  atomic.Int64
	epoch time.Time
}

func (t *tickets) Name() string { return "tickets" }

func (t *tickets) Acquire(ctx context.Context) (limit.Lease, error) { return t.AcquireN(ctx, 1) }

func (t *tickets) AcquireN(_ context.Context, cost int) (limit.Lease, error) {
	if t.left.Add(-int64(cost)) < 0 {
		t.left.Add(int64(cost))
		return limit.Lease{}, &limit.RateLimitedError{Limiter: t.Name(), Reason: telemetry.ReasonNoPermit}
	}
	return limit.NewLease(t, cost, time.Since(t.epoch)), nil
}

// ReleaseLease returns the lease's tickets, once however many copies of the
// lease are released.
func (t *tickets) ReleaseLease(l limit.Lease) { t.left.Add(int64(l.Cost())) }

func ExampleNewLease() {
	t := &tickets{epoch: time.Now()}
	t.left.Store(2)
	var lim limit.Limiter = t

	lease, _ := lim.AcquireN(context.Background(), 2)
	copied := lease
	copied.Release() // a copy's release frees the tickets...
	lease.Release()  // ...and the original's frees nothing more
	fmt.Println(t.left.Load(), lease.Held())
	// Output: 2 false
}
