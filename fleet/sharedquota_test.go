package fleet

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/telemetry"
)

// published is a response publishing remaining of limit, resetting in
// reset seconds (draft-ietf-httpapi-ratelimit-headers ≤ -06 fields).
func published(remaining, limit, reset string) quota.Response {
	h := http.Header{}
	h.Set("RateLimit-Limit", limit)
	h.Set("RateLimit-Remaining", remaining)
	h.Set("RateLimit-Reset", reset)
	return quota.Response{Status: http.StatusOK, Header: h}
}

func newTestQuota(t *testing.T, c redis.UniversalClient, prefix string, g *quota.Guard) *SharedQuota {
	t.Helper()
	// A Redis call may take a second on a machine running every package's
	// tests under the race detector: these tests are about what the view
	// decides, not about failing closed on a slow call.
	s, err := NewSharedQuota(c, g, Options{Name: "svc", Prefix: prefix, Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// shortDeadline is a context whose deadline, 2 s away, comes before the
// resets the tests publish: an attempt the view would hold is refused at
// once (telemetry.ReasonDeadline) with the time until the reset.
func shortDeadline(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// The queue setting is the guard's: left out, an attempt is held until
// the key has room; 0 refuses at once; n lets n units of this process's
// attempts wait, and refuses the next at once.
func TestSharedQuotaQueueLimit(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	view := func(queue *int) *SharedQuota {
		s, err := NewSharedQuota(c, nil, Options{Name: "svc", Prefix: prefix, QueueLimit: queue})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	held, refusing, one := view(nil), view(new(0)), view(new(1))
	block := func() { // a Retry-After of 1 s for every process
		h := http.Header{"Retry-After": {"1"}}
		held.Observe(ctx, "api", quota.Response{Status: http.StatusTooManyRequests, Header: h}, time.Now())
	}

	block()
	var rl *limit.RateLimitedError
	if err := refusing.Acquire(ctx, "api", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonNoPermit || rl.RetryAfter > time.Second {
		t.Errorf("QueueLimit 0: %v; want a no_permit refusal within the Retry-After", err)
	}
	start := time.Now()
	if err := held.Acquire(ctx, "api", 1); err != nil || time.Since(start) < 900*time.Millisecond {
		t.Errorf("the default: %v after %v; want the attempt held until the Retry-After ends", err, time.Since(start))
	}

	block()
	errc := make(chan error, 1)
	go func() { errc <- one.Acquire(ctx, "api", 1) }()
	// The waiter is in a real Redis round trip, out of synctest's reach:
	// ask until it counts itself, for as long as a loaded machine needs.
	waitUntil(t, 10*time.Second, "QueueLimit 1: the first unit to begin waiting", func() bool { return one.waiting.Load() > 0 })
	if err := one.Acquire(ctx, "api", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonQueueFull {
		t.Errorf("QueueLimit 1, a unit already waiting: %v; want a queue_full refusal", err)
	}
	if err := <-errc; err != nil {
		t.Errorf("QueueLimit 1, the unit that waited: %v", err)
	}
}

// What one process reads from a response, another sees; the reserve (2%
// of 100) is kept back, and the last unit above it goes to whichever asks
// first.
func TestSharedQuotaSeenByEveryProcess(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	a, b := newTestQuota(t, c, prefix, nil), newTestQuota(t, c, prefix, nil)
	if err := a.Observe(ctx, "api", published("3", "100", "30"), time.Now()); err != nil {
		t.Fatal(err)
	}
	st, err := b.State(ctx, "api")
	if err != nil {
		t.Fatal(err)
	}
	if !st.Known || st.Remaining != 3 || st.Limit != 100 || time.Until(st.Reset) < 29*time.Second {
		t.Errorf("b sees %+v, want 3 of 100 known, reset in 30s", st)
	}
	if err := a.Acquire(ctx, "api", 1); err != nil {
		t.Errorf("a, the unit above the reserve: %v", err)
	}
	err = b.Acquire(shortDeadline(t), "api", 1)
	var rl *limit.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter < 29*time.Second || rl.RetryAfter > 30*time.Second {
		t.Errorf("b, inside the reserve: %v, want a refusal until the reset", err)
	}
}

// A Retry-After one process receives blocks the key for every process.
func TestSharedQuotaRetryAfterBlocksEveryone(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	a, b := newTestQuota(t, c, prefix, nil), newTestQuota(t, c, prefix, nil)
	h := http.Header{"Retry-After": {"5"}}
	a.Observe(ctx, "api", quota.Response{Status: http.StatusTooManyRequests, Header: h}, time.Now())
	err := b.Acquire(shortDeadline(t), "api", 1)
	var rl *limit.RateLimitedError
	if !errors.As(err, &rl) || rl.RetryAfter <= 4900*time.Millisecond || rl.RetryAfter > 5*time.Second {
		t.Errorf("b: %v, want a refusal for the Retry-After's 5s", err)
	}
	if st, _ := b.State(ctx, "api"); time.Until(st.BlockedUntil) < 4900*time.Millisecond {
		t.Errorf("b's view: blocked until %v, want 5s ahead", st.BlockedUntil)
	}
}

// Four processes racing for a published remaining of 50 (a reserve of 20
// of 1,000) admit exactly the 30 above the reserve between them.
func TestSharedQuotaProcessesCannotAllSpendIt(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	views := make([]*SharedQuota, 4)
	for i := range views {
		views[i] = newTestQuota(t, c, prefix, nil)
	}
	views[0].Observe(ctx, "api", published("50", "1000", "60"), time.Now())
	ctx = shortDeadline(t) // shorter than the wait for the reset: refused at once
	var admitted atomic.Int64
	var wg sync.WaitGroup
	for _, v := range views {
		for range 20 {
			wg.Go(func() {
				if v.Acquire(ctx, "api", 1) == nil {
					admitted.Add(1)
				}
			})
		}
	}
	wg.Wait()
	if n := admitted.Load(); n != 30 {
		t.Errorf("%d attempts admitted, want 30", n)
	}
}

// Within one window the view only lowers: a process answering late with a
// higher figure does not undo the others' reservations. A later reset
// starts a new window, whose figures are taken.
func TestSharedQuotaWindows(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	a, b := newTestQuota(t, c, prefix, nil), newTestQuota(t, c, prefix, nil)
	now := time.Now()
	a.Observe(ctx, "api", published("10", "100", "30"), now)
	b.Observe(ctx, "api", published("20", "100", "30"), now)
	if st, _ := a.State(ctx, "api"); st.Remaining != 10 {
		t.Errorf("same window, a higher figure: remaining %d, want 10", st.Remaining)
	}
	b.Observe(ctx, "api", published("5", "100", "30"), now)
	if st, _ := a.State(ctx, "api"); st.Remaining != 5 {
		t.Errorf("same window, a lower figure: remaining %d, want 5", st.Remaining)
	}
	b.Observe(ctx, "api", published("90", "100", "90"), now)
	if st, _ := a.State(ctx, "api"); st.Remaining != 90 || time.Until(st.Reset) < 89*time.Second {
		t.Errorf("a new window: %+v, want 90 until 90s ahead", st)
	}
}

// Observe feeds this process's own guard as well.
func TestSharedQuotaFeedsTheGuard(t *testing.T) {
	c, prefix := testRedis(t)
	g, err := quota.New(quota.Options{})
	if err != nil {
		t.Fatal(err)
	}
	s := newTestQuota(t, c, prefix, g)
	now := time.Now()
	s.Observe(context.Background(), "api", published("7", "100", "30"), now)
	if st, ok := g.State("api", now); !ok || st.Remaining != 7 {
		t.Errorf("the guard holds %+v, %v; want remaining 7", st, ok)
	}
}

// With Redis gone, failing closed refuses with ErrUnavailable — not a
// throttle — and failing open admits.
func TestSharedQuotaFailurePolicy(t *testing.T) {
	p := startPrivateRedis(t)
	ctx := context.Background()
	closed, _ := NewSharedQuota(p.client(t), nil, Options{Name: "svc", Timeout: 50 * time.Millisecond})
	open, _ := NewSharedQuota(p.client(t), nil, Options{Name: "svc", Timeout: 50 * time.Millisecond, FailOpen: true})
	p.stop()
	if err := closed.Acquire(ctx, "api", 1); !errors.Is(err, ErrUnavailable) || errors.Is(err, limit.ErrRateLimited) {
		t.Errorf("failing closed: %v, want ErrUnavailable and no throttle", err)
	}
	if err := open.Acquire(ctx, "api", 1); err != nil {
		t.Errorf("failing open: %v, want nil", err)
	}
}

// A call whose context has ended reserves nothing, as every limiter's.
func TestSharedQuotaEndedContextReservesNothing(t *testing.T) {
	c, prefix := testRedis(t)
	ctx := context.Background()
	s := newTestQuota(t, c, prefix, nil)
	if err := s.Observe(ctx, "api", published("10", "100", "30"), time.Now()); err != nil {
		t.Fatal(err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Acquire(cancelled, "api", 1); err != context.Canceled {
		t.Errorf("a cancelled context: %v; want context.Canceled", err)
	}
	expired, cancel := context.WithDeadline(ctx, time.Now())
	defer cancel()
	var rl *limit.RateLimitedError
	if err := s.Acquire(expired, "api", 1); !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline {
		t.Errorf("an expired context: %v; want a deadline refusal", err)
	}
	if st, err := s.State(ctx, "api"); err != nil || st.Remaining != 10 {
		t.Errorf("remaining %d (%v) after ended contexts; want the 10 published", st.Remaining, err)
	}
}
