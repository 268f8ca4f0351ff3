package fleet

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// perSecondShare is the failure policy's share builder of PerSecond.
func perSecondShare(rate float64, burst, queue int) func(n int) (limit.Limiter, error) {
	return func(n int) (limit.Limiter, error) {
		return limit.PerSecond(rate/float64(n), max(burst/n, 1), limit.WithQueueLimit(queue))
	}
}

// Failing closed, a request Redis cannot answer is refused with an
// *UnavailableError: not a throttle, so no runner waits on it as one.
func TestFailClosedRefusesUnavailable(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: time.Millisecond, burst: 10}
		b.down.Store(true)
		l := fakeLimiter(b, 10, Options{Name: "closed"})
		_, err := l.Acquire(context.Background())
		var ue *UnavailableError
		if !errors.As(err, &ue) || !errors.Is(err, errFakeDown) || errors.Is(err, limit.ErrRateLimited) {
			t.Errorf("err = %v, want an UnavailableError wrapping the cause, not a throttle", err)
		}
	})
}

// Failing open, the process enforces its share: the limit over the
// instance count when the outage began, 100 a second with a burst of 100
// over 4 processes. A count that changes during the outage does not
// rebuild the share (a new one would start full); the next outage's share
// follows it.
func TestFailOpenEnforcesShare(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 10 * time.Millisecond, burst: 100}
		b.down.Store(true)
		count := &countTo{}
		count.n.Store(4)
		l := fakeLimiter(b, 100, Options{Name: "open", FailOpen: true, Instances: count})
		l.share.build = perSecondShare(100, 100, 0)
		ctx := context.Background()
		for i := range 25 {
			if _, err := l.Acquire(ctx); err != nil {
				t.Fatalf("acquire %d of the share of 25: %v", i+1, err)
			}
		}
		_, err := l.Acquire(ctx)
		var rl *limit.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter != 40*time.Millisecond {
			t.Errorf("26th: %v, want a throttle with the share's RetryAfter of 40ms (25 a second)", err)
		}
		count.n.Store(2) // the count changed: not during this outage
		if _, err := l.Acquire(ctx); !errors.As(err, &rl) {
			t.Errorf("the count changed mid-outage: %v, want the same share's throttle", err)
		}
		b.down.Store(false)
		time.Sleep(time.Second) // the circuit's interval, then a probe that Redis answers
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatalf("Redis back: %v", err)
		}
		b.down.Store(true)
		for range 3 { // the next outage: the circuit opens again
			l.Acquire(ctx)
		}
		for i := range 50 - 3 {
			if _, err := l.Acquire(ctx); err != nil {
				t.Fatalf("acquire %d of the share of 50: %v", i+1, err)
			}
		}
	})
}

// After three failures in a row the circuit keeps calls from Redis; after
// its interval (50 ms, ±20%) one probe goes, and once Redis answers the
// circuit closes and every call goes to Redis again.
func TestCircuitOpensAndRecovers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: time.Microsecond, burst: 1000}
		b.down.Store(true)
		l := fakeLimiter(b, 1000, Options{Name: "circuit"})
		ctx := context.Background()
		for range 10 {
			l.Acquire(ctx)
		}
		if n := b.calls.Load(); n != 3 {
			t.Errorf("%d calls reached Redis, want 3: the circuit opens after them", n)
		}
		time.Sleep(39 * time.Millisecond)
		l.Acquire(ctx)
		if n := b.calls.Load(); n != 3 {
			t.Errorf("within the interval's least length: %d calls, want 3", n)
		}
		time.Sleep(21 * time.Millisecond) // past its longest, 60ms
		l.Acquire(ctx)
		if n := b.calls.Load(); n != 4 {
			t.Errorf("after the interval: %d calls, want 4 (one probe)", n)
		}
		b.down.Store(false)
		time.Sleep(time.Second) // past the next interval, at most 120ms
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatalf("the probe after recovery: %v", err)
		}
		for range 5 {
			if _, err := l.Acquire(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if n := b.calls.Load(); n != 10 {
			t.Errorf("after recovery: %d calls, want 10: every call reaches Redis", n)
		}
	})
}

// Callers queued for permits when Redis fails are all handed to the
// failure policy: none is left waiting, each ends with a typed error.
func TestQueuedCallersFollowThePolicy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 1}
		l := fakeLimiter(b, 1, Options{Name: "q", QueueLimit: new(10)})
		ctx := context.Background()
		l.Acquire(ctx)
		errs := make([]error, 4)
		var wg sync.WaitGroup
		for i := range errs {
			wg.Go(func() { _, errs[i] = l.Acquire(ctx) })
			synctest.Wait()
		}
		b.down.Store(true)
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, ErrUnavailable) {
				t.Errorf("caller %d: %v, want ErrUnavailable", i, err)
			}
		}
		if !l.q.empty() {
			t.Error("callers left in the queue")
		}
	})
}

// Every call has a timeout: a server that does not answer (paused) costs
// a call the timeout, not the caller's whole deadline.
func TestTimeoutBoundsEveryCall(t *testing.T) {
	p := startPrivateRedis(t)
	c := p.client(t)
	lim, err := PerSecond(c, 100, 0, Options{Name: "slow", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The first call dials and loads the script (EVALSHA, NOSCRIPT, EVAL):
	// on a loaded machine that can take longer than the 50 ms under test.
	eventually(t, 2*time.Second, "a first grant", func() bool { _, err := lim.Acquire(ctx); return err == nil })
	if err := p.client(t).Do(ctx, "CLIENT", "PAUSE", 2000, "ALL").Err(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = lim.Acquire(ctx)
	if d := time.Since(start); !errors.Is(err, ErrUnavailable) || d > 500*time.Millisecond {
		t.Errorf("paused server: %v after %v, want ErrUnavailable after about 50ms", err, d)
	}
	p.client(t).Do(ctx, "CLIENT", "UNPAUSE")
}

// Stopped and started again, Redis is used again without anyone's help:
// failing closed refuses while it is down and grants once it is back.
func TestRecoversAfterRedisRestart(t *testing.T) {
	p := startPrivateRedis(t)
	lim, err := PerSecond(p.client(t), 1000, 0, Options{Name: "restart", Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// The first call dials and loads the script: on a loaded machine that
	// can take longer than 50 ms.
	eventually(t, 2*time.Second, "a first grant", func() bool { _, err := lim.Acquire(ctx); return err == nil })
	p.stop()
	for range 5 {
		if _, err := lim.Acquire(ctx); !errors.Is(err, ErrUnavailable) {
			t.Fatalf("Redis down: %v, want ErrUnavailable", err)
		}
	}
	p.start()
	eventually(t, 2*time.Second, "granting again after the restart", func() bool {
		_, err := lim.Acquire(ctx)
		return err == nil
	})
}

// A client that ignores its contexts' deadlines would make every call wait
// for its ReadTimeout instead of Options.Timeout: it is refused when built.
func TestClientMustHonourContexts(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	_, err := PerSecond(c, 10, 0, Options{Name: "x"})
	var ce *headroom.ConfigError
	if !errors.As(err, &ce) || ce.Field != "client.ContextTimeoutEnabled" {
		t.Errorf("err = %v, want a ConfigError on client.ContextTimeoutEnabled", err)
	}
}

// pastDeadline is a context whose deadline has passed on the clock while
// its own timer has not yet fired (Err is still nil), as happens on a
// loaded machine, where the network poller sees a connection's deadline
// before the context's timer runs.
type pastDeadline struct{ context.Context }

func (pastDeadline) Deadline() (time.Time, bool) { return time.Now().Add(-time.Millisecond), true }

// A call cut short by its caller's deadline is the caller's, even before
// the context says so: the caller gets a deadline's refusal, not
// ErrUnavailable, and the circuit counts no failure of Redis.
func TestCallerDeadlineIsNoRedisFailure(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &fakeBucket{interval: time.Millisecond, burst: 10}
		b.down.Store(true)
		l := fakeLimiter(b, 10, Options{Name: "deadline"})
		for range 5 {
			_, err := l.Acquire(pastDeadline{context.Background()})
			var rl *limit.RateLimitedError
			if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonDeadline || errors.Is(err, ErrUnavailable) {
				t.Fatalf("err = %v, want a refusal with ReasonDeadline", err)
			}
		}
		if l.circuit.open.Load() || l.circuit.fails.Load() != 0 {
			t.Errorf("the circuit counted %d failures (open %v), want none", l.circuit.fails.Load(), l.circuit.open.Load())
		}
	})
}
