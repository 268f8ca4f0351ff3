package limit

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// newTestAdaptiveRate builds the limiter o describes with a queue of 500
// units unless opts say otherwise.
func newTestAdaptiveRate(t *testing.T, o adaptive.RateConfig, opts ...Option) *AdaptiveRateLimiter {
	t.Helper()
	l, err := AdaptiveRate(o, append([]Option{WithName("test"), WithQueueLimit(500)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

func wantRefusal(t *testing.T, err error, reason string) *RateLimitedError {
	t.Helper()
	var rl *RateLimitedError
	if !errors.As(err, &rl) || !errors.Is(err, ErrRateLimited) || rl.Reason != reason || rl.Limiter != "test" {
		t.Fatalf("err = %v, want a %s refusal", err, reason)
	}
	return rl
}

// One unit a second, a bucket of one unit, and no faster: a slow start
// would double the rate on the first success after a wait.
var slow = adaptive.RateConfig{MinUnitsPerMinute: 6, InitialUnitsPerMinute: 60, MaxUnitsPerMinute: 60, BurstTime: headroom.Duration(time.Second)}

func TestAdaptiveRateQueueLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// The queue counts units, as every shape's does: two of one unit.
		l := newTestAdaptiveRate(t, slow, WithQueueLimit(2))
		ctx := context.Background()
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		var wg sync.WaitGroup
		got := make([]time.Duration, 2)
		for i := range 2 {
			wg.Go(func() {
				le, err := l.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				got[i] = time.Since(start)
				le.Release()
			})
			synctest.Wait() // queued in order
		}
		if n := l.State().Queued; n != 2 {
			t.Fatalf("queue %d, want 2", n)
		}
		_, err := l.Acquire(ctx)
		if rl := wantRefusal(t, err, telemetry.ReasonQueueFull); rl.RetryAfter != time.Second {
			t.Fatalf("retry after %v, want 1s", rl.RetryAfter)
		}
		wg.Wait()
		if got[0] != time.Second || got[1] != 2*time.Second {
			t.Fatalf("waits %v, want [1s 2s] in FIFO order", got)
		}
	})
}

func TestAdaptiveRateMaxWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := slow
		o.MaxWait = headroom.Duration(3 * time.Second)
		o.BurstTime = headroom.Duration(10 * time.Second) // 10 units
		l := newTestAdaptiveRate(t, o)
		ctx := context.Background()
		first, _ := l.AcquireN(ctx, 10)
		// 4 units would take 4 s: refused at once, 1 s too long.
		_, err := l.AcquireN(ctx, 4)
		if rl := wantRefusal(t, err, telemetry.ReasonMaxWait); rl.RetryAfter != time.Second {
			t.Fatalf("retry after %v, want 1s", rl.RetryAfter)
		}
		// 2 units wait; a throttle with Retry-After pauses 10 s: the
		// waiter gives up after 3 s.
		done := make(chan error)
		start := time.Now()
		go func() { _, err := l.AcquireN(ctx, 2); done <- err }()
		synctest.Wait()
		first.Report(adaptive.Throttled, 10*time.Second)
		first.Release()
		if l.State().PausedUntil.IsZero() {
			t.Fatal("not paused")
		}
		wantRefusal(t, <-done, telemetry.ReasonMaxWait)
		if d := time.Since(start); d != 3*time.Second {
			t.Fatalf("gave up after %v, want 3s", d)
		}
		if l.State().Queued != 0 {
			t.Fatal("queue not empty")
		}
	})
}

// A MaxWait of "for ever" serves a waiter when its units arrive. (Next's
// answer once wrapped into the past: the service timer fired at 0 again and
// again, spinning a core, and in a bubble the clock never moved.)
func TestAdaptiveRateHugeMaxWaitServesOnTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := slow
		o.MaxWait = headroom.Duration(math.MaxInt64)
		o.BurstTime = headroom.Duration(10 * time.Second) // 10 units
		l := newTestAdaptiveRate(t, o)
		ctx := context.Background()
		time.Sleep(10 * time.Millisecond) // so that the waiter enqueues after 0
		if _, err := l.AcquireN(ctx, 10); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		lease, err := l.AcquireN(ctx, 2) // two units at one a second
		if err != nil {
			t.Fatal(err)
		}
		lease.Release()
		if d := time.Since(start); d != 2*time.Second {
			t.Fatalf("waited %v for 2 units at 1 a second; want 2s", d)
		}
	})
}

func TestAdaptiveRateDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestAdaptiveRate(t, slow)
		l.Acquire(context.Background())
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		_, err := l.Acquire(ctx)
		if rl := wantRefusal(t, err, telemetry.ReasonDeadline); rl.RetryAfter != time.Second {
			t.Fatalf("retry after %v", rl.RetryAfter)
		}
	})
}

// A waiter whose context ends leaves the queue and takes nothing: the one
// behind it goes exactly when it would have without it.
func TestAdaptiveRateCancelLeavesNoPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestAdaptiveRate(t, slow)
		bg := context.Background()
		l.Acquire(bg)
		start := time.Now()
		ctx, cancel := context.WithCancel(bg)
		errc := make(chan error)
		go func() { _, err := l.Acquire(ctx); errc <- err }()
		synctest.Wait()
		got := make(chan time.Duration)
		go func() {
			le, err := l.Acquire(bg)
			if err != nil {
				t.Error(err)
			}
			le.Release()
			got <- time.Since(start)
		}()
		synctest.Wait()
		time.Sleep(300 * time.Millisecond)
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v, want context.Canceled", err)
		}
		if d := <-got; d != time.Second {
			t.Fatalf("second waiter went after %v, want 1s", d)
		}
		if n, tok := l.State().Queued, l.State().Tokens; n != 0 || tok > 1e-9 {
			t.Fatalf("queue %d, tokens %v", n, tok)
		}
	})
}

// The lease carries the feedback: a throttle cuts and pauses, an ignored
// outcome changes nothing, cost 0 teaches nothing, successes after waits
// climb.
func TestAdaptiveRateFeedbackThroughLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestAdaptiveRate(t, adaptive.RateConfig{InitialUnitsPerMinute: 1200})
		ctx := context.Background()
		le, _ := l.Acquire(ctx)
		le.Report(adaptive.Ignored, 0)
		le.Release()
		le, _ = l.Acquire(ctx)
		le.Report(adaptive.Dropped, 0)
		le.Release()
		if r := l.State().Rate; r != 1200 {
			t.Fatalf("rate %v after ignored outcomes", r)
		}
		zero, err := l.AcquireN(ctx, 0)
		if err != nil || zero.Held() {
			t.Fatalf("cost 0: %v, held %v", err, zero.Held())
		}
		zero.Report(adaptive.Throttled, time.Minute)
		zero.Release()
		if r := l.State().Rate; r != 1200 {
			t.Fatalf("rate %v after a cost-0 throttle", r)
		}
		time.Sleep(time.Second)
		le, _ = l.Acquire(ctx)
		le.Report(adaptive.Throttled, 45*time.Second)
		le.Release()
		if r := l.State().Rate; r != 840 {
			t.Fatalf("rate %v after a throttle, want 840", r)
		}
		if until := l.State().PausedUntil; time.Until(until) != 30*time.Second {
			t.Fatalf("paused until %v, want 30s from now", until)
		}
		c := l.State().Counts
		if c.Cuts != 1 || c.Pauses != 1 || c.Throttles != 1 {
			t.Fatalf("counts %+v", c)
		}
		// Nothing goes in the pause; afterwards requests wait, and a
		// success 10 s after the pause climbs 120.
		start := time.Now()
		le, _ = l.Acquire(ctx)
		if d, want := time.Since(start), 30*time.Second+time.Minute/840; d < want || d > want+time.Nanosecond { // rounded up to the ns
			t.Fatalf("first request after the pause waited %v", d)
		}
		time.Sleep(10 * time.Second)
		le.Release()
		if r := l.State().Rate; r != 960 {
			t.Fatalf("rate %v, want 960", r)
		}
		if _, err := l.AcquireN(ctx, -1); !errors.Is(err, ErrCost) {
			t.Fatalf("negative cost: %v", err)
		}
	})
}

func TestAdaptiveRateDisabledAdmitsEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestAdaptiveRate(t, adaptive.RateConfig{Disabled: true, InitialUnitsPerMinute: 60})
		start := time.Now()
		for range 1000 {
			le, err := l.AcquireN(context.Background(), 5)
			if err != nil {
				t.Fatal(err)
			}
			le.Report(adaptive.Throttled, time.Minute)
			le.Release()
		}
		if time.Since(start) != 0 || l.State().Rate != 60 {
			t.Fatal("disabled limiter held back or changed its rate")
		}
		if c := l.State().Counts; c.Units != 5000 || c.Throttles != 1000 || c.Cuts != 0 {
			t.Fatalf("counts %+v", c)
		}
	})
}

func TestAdaptiveRateInstances(t *testing.T) {
	l := newTestAdaptiveRate(t, adaptive.RateConfig{InitialUnitsPerMinute: 1200, Instances: 2})
	if l.State().Rate != 600 || l.State().WholeRate != 1200 {
		t.Fatalf("rate %v whole %v", l.State().Rate, l.State().WholeRate)
	}
	l.SetInstances(3)
	if l.State().Rate != 400 || l.State().Instances != 3 {
		t.Fatalf("rate %v", l.State().Rate)
	}
	c := counter{n: 4}
	l = newTestAdaptiveRate(t, adaptive.RateConfig{InitialUnitsPerMinute: 1200, InstanceCounter: &c})
	le, _ := l.Acquire(context.Background())
	le.Release()
	if l.State().Instances != 4 || l.State().Rate != 300 {
		t.Fatalf("counter not polled: %d instances, rate %v", l.State().Instances, l.State().Rate)
	}
}

type counter struct{ n int }

func (c *counter) Instances() int { return c.n }

func TestAdaptiveRateConfigValidate(t *testing.T) {
	o := Options{AdaptiveRate: &adaptive.RateConfig{
		Controller: "vegas", MinUnitsPerMinute: -5, BurstTime: headroom.Duration(-time.Second),
		MaxWait: headroom.Duration(-1), Instances: -1, Cubic: &adaptive.Cubic{Beta: 3},
	}}
	err := o.Validate()
	if err == nil {
		t.Fatal("no error")
	}
	for _, f := range []string{"AdaptiveRate.Controller", "AdaptiveRate.MinUnitsPerMinute", "AdaptiveRate.BurstTime", "AdaptiveRate.MaxWait", "AdaptiveRate.Instances", "AdaptiveRate.Cubic"} {
		if !strings.Contains(err.Error(), f+" =") {
			t.Errorf("missing %s in:\n%v", f, err)
		}
	}
	var oe *headroom.ConfigError
	if !errors.As(err, &oe) {
		t.Fatal("not an *headroom.ConfigError")
	}
	// Defaults follow an explicit maximum below them.
	if err := (&Options{AdaptiveRate: &adaptive.RateConfig{MaxUnitsPerMinute: 30}}).Validate(); err != nil {
		t.Fatal(err)
	}
	// A bad maximum is one problem: the defaults beside it do not inherit it.
	err = (&Options{AdaptiveRate: &adaptive.RateConfig{MaxUnitsPerMinute: -1}}).Validate()
	if got := unjoin(err); len(got) != 1 || !strings.Contains(err.Error(), "MaxUnitsPerMinute = -1") {
		t.Fatalf("maximum -1: %d problems:\n%v", len(got), err)
	}
	lim, err := New(Options{AdaptiveRate: &adaptive.RateConfig{Controller: "cubic"}, Name: "x"})
	if err != nil {
		t.Fatal(err)
	}
	a := lim.(*AdaptiveRateLimiter)
	defer a.Close()
	if a.Name() != "x" || a.State().Rate != adaptive.DefaultRateConfig().InitialUnitsPerMinute {
		t.Fatalf("New: %s %v", a.Name(), a.State().Rate)
	}
}

// An adaptive rate limiter reads from JSON through ParseOptions, its
// durations as strings.
func TestAdaptiveRateConfigJSON(t *testing.T) {
	o, err := ParseOptions([]byte(`{"adaptiveRate": {"controller": "cubic", "maxUnitsPerMinute": 2700, "maxPause": "20s",
		"publishedLimitFraction": 0.95}, "name": "orders-api", "queueLimit": 10}`))
	if err != nil {
		t.Fatal(err)
	}
	want := adaptive.RateConfig{Controller: "cubic", MaxUnitsPerMinute: 2700, MaxPause: headroom.Duration(20 * time.Second), PublishedLimitFraction: 0.95}
	if diff := cmp.Diff(want, *o.AdaptiveRate, cmpopts.IgnoreInterfaces(struct{ adaptive.RateController }{})); diff != "" || o.QueueLimit == nil || *o.QueueLimit != 10 {
		t.Fatalf("(-want +got):\n%s queue %v", diff, o.QueueLimit)
	}
	for _, bad := range []struct{ json, want string }{
		{`{"adaptiveRate": {"maxUnitsPerMinut": 1}}`, `adaptiveRate.maxUnitsPerMinut = an unknown field`},
		{`{"adaptiveRate": {"maxWait": 60}}`, `adaptiveRate.maxWait = 60: want a duration string such as "30s"`},
		{`{"adaptiveRate": {"minUnitsPerMinute": -1}}`, `adaptiveRate.minUnitsPerMinute`},
	} {
		if _, err := ParseOptions([]byte(bad.json)); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%s: err %v, want %q", bad.json, err, bad.want)
		}
	}
}

// The adaptive rate limiter's queue counts units, as every other shape's
// does: with a queue of 5, one waiter of cost 5 fills it.
func TestAdaptiveRateQueueCountsUnits(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newTestAdaptiveRate(t, slow, WithQueueLimit(5))
		ctx := context.Background()
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			le, err := l.AcquireN(ctx, 5)
			le.Release()
			done <- err
		}()
		synctest.Wait()
		_, err := l.Acquire(ctx)
		wantRefusal(t, err, telemetry.ReasonQueueFull)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
}

// With a queue of 0 the adaptive rate limiter refuses at once, like every
// shape, with when the units would be due.
func TestAdaptiveRateWithoutQueueRefusesAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := AdaptiveRate(slow, WithName("test"), WithQueueLimit(0))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ctx := context.Background()
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		_, err = l.Acquire(ctx)
		if rl := wantRefusal(t, err, telemetry.ReasonNoPermit); rl.RetryAfter != time.Second {
			t.Fatalf("retry after %v, want 1s", rl.RetryAfter)
		}
	})
}

// By default the adaptive rate limiter queues, as its specification gives:
// 500 units wait their turn, and the next is refused with queue_full; the
// other shapes refuse at once.
func TestAdaptiveRateQueuesByDefault(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		patient := slow
		patient.MaxWait = headroom.Duration(time.Hour) // 500 units at one a second
		l, err := AdaptiveRate(patient, WithName("test"))
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
		for range 5 {
			go l.AcquireN(ctx, 100) // 500 units queued, each 100 of them
		}
		synctest.Wait()
		if n := l.State().Queued; n != 5 {
			t.Fatalf("%d waiting; want 5", n)
		}
		_, err = l.Acquire(ctx)
		wantRefusal(t, err, telemetry.ReasonQueueFull)
		cancel()
		synctest.Wait()
	})
	for _, o := range []Options{{PermitsPerSecond: 1}, {Concurrency: 1}, {PerWindow: &WindowOptions{Permits: 1, Window: headroom.Duration(time.Second)}}, {Adaptive: &adaptive.ConcurrencyConfig{}}} {
		if got := o.queueLimit(); got != 0 {
			t.Errorf("%+v queues %d by default; want 0", o, got)
		}
	}
}
