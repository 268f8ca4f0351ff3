package limit

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

func TestAdaptiveConfigEmptyIsComplete(t *testing.T) {
	var o Options
	if err := json.Unmarshal([]byte(`{"adaptive": {}}`), &o); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil {
		t.Fatalf(`"adaptive": {} does not validate: %v`, err)
	}
	lim, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	a := lim.(*AdaptiveLimiter)
	if got := a.engine.Config(); got.Minimum != 4 || got.Maximum != 200 || got.Initial != 20 || got.Multiple != 2 || got.DecreaseFactor != 0.9 {
		t.Fatalf("defaults %+v", got)
	}
	if a.Name() != "adaptive" {
		t.Fatalf("Name() = %q", a.Name())
	}
}

func TestAdaptiveConfigJSONNames(t *testing.T) {
	var o Options
	in := `{"adaptive": {"minimum": 2, "maximum": 50, "initial": 10, "multiple": 1.5, "decreaseFactor": 0.8}}`
	if err := json.Unmarshal([]byte(in), &o); err != nil {
		t.Fatal(err)
	}
	want := adaptive.ConcurrencyConfig{Minimum: 2, Maximum: 50, Initial: 10, Multiple: 1.5, DecreaseFactor: 0.8}
	if *o.Adaptive != want {
		t.Fatalf("read %+v, want %+v", *o.Adaptive, want)
	}
}

func TestAdaptiveConfigValidateListsEveryProblem(t *testing.T) {
	o := Options{Adaptive: &adaptive.ConcurrencyConfig{Minimum: -1, Maximum: -2, Initial: -3, Multiple: 0.5, DecreaseFactor: 1.5}}
	err := o.Validate()
	fields := map[string]bool{}
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var oe *headroom.ConfigError
		if !errors.As(e, &oe) {
			t.Fatalf("%v is not an *headroom.ConfigError", e)
		}
		fields[oe.Field] = true
	}
	for _, f := range []string{"Adaptive.Minimum", "Adaptive.Maximum", "Adaptive.Initial", "Adaptive.Multiple", "Adaptive.DecreaseFactor"} {
		if !fields[f] {
			t.Errorf("Validate did not report %s: %v", f, err)
		}
	}
	for _, a := range []adaptive.ConcurrencyConfig{{Minimum: 10, Maximum: 5}, {Initial: 300}, {Minimum: 30, Initial: 25}} {
		if err := (&Options{Adaptive: &a}).Validate(); err == nil {
			t.Errorf("%+v validates", a)
		}
	}
	if _, err := Adaptive(adaptive.ConcurrencyConfig{Maximum: 10, Minimum: 2, Initial: 5}); err != nil {
		t.Errorf("Adaptive(adaptive.ConcurrencyConfig{Maximum: 10}, Minimum 2, Initial 5): %v", err)
	}
}

func TestAdaptiveRefusesWhenFullAndReportsNothingUntilWarm(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, err := Adaptive(adaptive.ConcurrencyConfig{Initial: 5}, WithName("payments"))
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		if _, ok := l.CurrentLimit(); ok {
			t.Fatal("CurrentLimit reports a value before any call")
		}
		if _, ok := l.Baseline(); ok {
			t.Fatal("Baseline reports a value before any call")
		}
		var leases []Lease
		for range 5 {
			lease, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			leases = append(leases, lease)
		}
		_, err = l.Acquire(ctx)
		var rl *RateLimitedError
		if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonNoPermit || rl.Limiter != "payments" || !errors.Is(err, ErrRateLimited) {
			t.Fatalf("sixth Acquire: %v, want a no_permit refusal from payments", err)
		}
		if _, err := l.AcquireN(ctx, 201); !errors.Is(err, ErrCost) {
			t.Fatalf("AcquireN(201): %v, want a CostError", err)
		}
		if _, err := l.AcquireN(ctx, 0); err != nil {
			t.Fatalf("AcquireN(0): %v", err)
		}
		for i := range leases {
			leases[i].Release()
			leases[i].Release() // the second frees nothing
		}
		// 100 calls of 10 ms: then it has an opinion.
		for range 100 {
			lease, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(10 * time.Millisecond)
			lease.Release()
		}
		if b, ok := l.Baseline(); !ok || b < 9*time.Millisecond || b > 11*time.Millisecond {
			t.Fatalf("Baseline() = %v, %v after 100 calls of 10ms", b, ok)
		}
		if n, ok := l.CurrentLimit(); !ok || n != 5 {
			t.Fatalf("CurrentLimit() = %d, %v; want 5 (unconstrained, it holds)", n, ok)
		}
	})
}

// The latency is the time the lease is held; a slow round cuts the limit,
// and an ignored lease teaches nothing.
func TestAdaptiveLearnsFromLeases(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := Adaptive(adaptive.ConcurrencyConfig{})
		ctx := context.Background()
		call := func(d time.Duration, o adaptive.Outcome) {
			lease, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			time.Sleep(d)
			lease.Report(o, 0)
			lease.Release()
		}
		for range 120 { // past warm-up, into a fresh round
			call(10*time.Millisecond, adaptive.Success)
		}
		for range 40 {
			call(time.Second, adaptive.Ignored)
		}
		if n, _ := l.CurrentLimit(); n != 20 {
			t.Fatalf("limit %d after ignored slow calls, want 20", n)
		}
		for range 20 {
			call(50*time.Millisecond, adaptive.Success)
		}
		if n, _ := l.CurrentLimit(); n != 18 {
			t.Fatalf("limit %d after a round of 50ms calls against a 10ms baseline, want 18", n)
		}
		for range 18 {
			call(10*time.Millisecond, adaptive.Dropped)
		}
		if n, _ := l.CurrentLimit(); n != 16 {
			t.Fatalf("limit %d after a round of dropped calls, want 16", n)
		}
	})
}

func TestAdaptiveQueueIsFIFOAndCancelLeaksNoSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l, _ := Adaptive(adaptive.ConcurrencyConfig{Initial: 4, Minimum: 1}, WithQueueLimit(2))
		ctx := context.Background()
		var held []Lease
		for range 4 {
			lease, _ := l.Acquire(ctx)
			held = append(held, lease)
		}
		var (
			mu    sync.Mutex
			order []int
		)
		cctx, cancel := context.WithCancel(ctx)
		errs := make(chan error, 3)
		for i, c := range []context.Context{ctx, cctx} {
			go func() {
				lease, err := l.Acquire(c)
				errs <- err
				if err == nil {
					mu.Lock()
					order = append(order, i)
					mu.Unlock()
					time.Sleep(time.Millisecond)
					lease.Release()
				}
			}()
			synctest.Wait()
		}
		// The queue holds two: a third is refused.
		if _, err := l.Acquire(ctx); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("Acquire with a full queue: %v", err)
		} else if rl := err.(*RateLimitedError); rl.Reason != telemetry.ReasonQueueFull {
			t.Fatalf("reason %q, want queue_full", rl.Reason)
		}
		cancel()
		synctest.Wait()
		if err := <-errs; !errors.Is(err, context.Canceled) {
			// The first to finish is the cancelled second waiter.
			t.Fatalf("cancelled waiter: %v", err)
		}
		held[0].Release()
		synctest.Wait()
		if err := <-errs; err != nil {
			t.Fatalf("first waiter: %v", err)
		}
		for _, h := range held[1:] {
			h.Release()
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := l.engine.InFlight(); got != 0 {
			t.Fatalf("%d units in flight after everything ended, want 0", got)
		}
		if len(order) != 1 || order[0] != 0 {
			t.Fatalf("granted %v, want only the first waiter", order)
		}
		if !l.queue.empty() {
			t.Fatal("queue not empty")
		}
	})
}

// A cost above the current limit but within Maximum is granted once nothing
// is in flight, alone; queued, it goes as soon as the holders release, and
// the callers behind it follow once it is done rather than waiting for
// ever behind a request no release would ever make room for.
func TestAdaptiveCostAboveCurrentLimitIsServedWhenIdle(t *testing.T) {
	t.Run("no queue", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _ := Adaptive(adaptive.ConcurrencyConfig{Maximum: 50, Minimum: 4, Initial: 4})
			ctx := context.Background()
			big, err := l.AcquireN(ctx, 10)
			if err != nil {
				t.Fatalf("AcquireN(10) on an idle limiter of 4 (Maximum 50): %v", err)
			}
			if _, err := l.Acquire(ctx); !errors.Is(err, ErrRateLimited) {
				t.Fatalf("Acquire while 10 of 4 are held: %v, want a refusal", err)
			}
			big.Release()
			lease, err := l.Acquire(ctx)
			if err != nil {
				t.Fatalf("Acquire after the large lease was released: %v", err)
			}
			if _, err := l.AcquireN(ctx, 10); !errors.Is(err, ErrRateLimited) {
				t.Fatalf("AcquireN(10) with 1 in flight: %v, want a refusal", err)
			}
			lease.Release()
		})
	})
	t.Run("queued", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			l, _ := Adaptive(adaptive.ConcurrencyConfig{Maximum: 50, Minimum: 4, Initial: 4}, WithQueueLimit(100))
			ctx := context.Background()
			held, _ := l.AcquireN(ctx, 2)
			type result struct {
				cost int
				err  error
			}
			out := make(chan result, 2)
			release := make(chan struct{})
			for _, cost := range []int{10, 1} {
				go func() {
					lease, err := l.AcquireN(ctx, cost)
					out <- result{cost, err}
					if err == nil && cost == 10 {
						<-release
					}
					lease.Release()
				}()
				synctest.Wait()
			}
			held.Release()
			synctest.Wait()
			if r := <-out; r.cost != 10 || r.err != nil {
				t.Fatalf("first out after the holder released: cost %d, %v; want cost 10 granted", r.cost, r.err)
			}
			select {
			case r := <-out:
				t.Fatalf("cost %d granted (%v) while 10 of 4 are held", r.cost, r.err)
			default:
			}
			close(release)
			synctest.Wait()
			if r := <-out; r.cost != 1 || r.err != nil {
				t.Fatalf("second out: cost %d, %v; want cost 1 granted", r.cost, r.err)
			}
			synctest.Wait()
			if n := l.engine.InFlight(); n != 0 || !l.queue.empty() {
				t.Fatalf("%d in flight, queue empty %v, after everything ended", n, l.queue.empty())
			}
		})
	})
}

// A waiter whose grant races its cancellation returns ctx.Err() and gives
// the slot back.
func TestAdaptiveGrantRacesCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for range 50 {
			l, _ := Adaptive(adaptive.ConcurrencyConfig{Initial: 1, Minimum: 1}, WithQueueLimit(1))
			held, _ := l.Acquire(context.Background())
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			var got Lease
			var err error
			go func() {
				got, err = l.Acquire(ctx)
				close(done)
			}()
			synctest.Wait()
			cancel()
			held.Release()
			<-done
			if err == nil {
				got.Release()
			}
			if n := l.engine.InFlight(); n != 0 {
				t.Fatalf("%d in flight after the race (err %v)", n, err)
			}
		}
	})
}

// Acquire and Release with sampling allocate nothing.
func TestAdaptiveZeroAllocs(t *testing.T) {
	l, _ := Adaptive(adaptive.ConcurrencyConfig{})
	ctx := context.Background()
	if n := testing.AllocsPerRun(1000, func() {
		lease, _ := l.Acquire(ctx)
		lease.Release()
	}); n != 0 {
		t.Fatalf("Acquire+release allocates %v times", n)
	}
}

// A maximum below the default minimum of 4 is a limit that stays at that
// maximum, not a conflict with a default the user never wrote; a minimum
// that was written above the maximum says both figures.
func TestAdaptiveMaximumBelowDefaultMinimum(t *testing.T) {
	l, err := Adaptive(adaptive.ConcurrencyConfig{Maximum: 3})
	if err != nil {
		t.Fatalf("Adaptive(Maximum 3): %v", err)
	}
	if got := l.engine.Limit(); got != 3 {
		t.Fatalf("limit %d, want 3", got)
	}
	_, err = Adaptive(adaptive.ConcurrencyConfig{Maximum: 3, Minimum: 5})
	if err == nil || !strings.Contains(err.Error(), "Adaptive.Minimum = 5: want at most Maximum (3)") {
		t.Fatalf("explicit conflict: %v", err)
	}
}
