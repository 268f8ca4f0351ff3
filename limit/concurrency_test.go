package limit

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/telemetry"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

func newBulkheadLimiter(t *testing.T, permits int, opts ...Option) *bulkhead {
	t.Helper()
	l, err := Concurrency(permits, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return l.(*bulkhead)
}

func mustAcquire(t *testing.T, l Limiter, cost int) Lease {
	t.Helper()
	lease, err := l.AcquireN(t.Context(), cost)
	if err != nil {
		t.Fatalf("AcquireN(%d): %v", cost, err)
	}
	return lease
}

func TestConcurrencyRefusesWhenFull(t *testing.T) {
	l := newBulkheadLimiter(t, 2)
	if l.Name() != "concurrency" {
		t.Fatalf("default name %q; want concurrency", l.Name())
	}
	a := mustAcquire(t, l, 2)
	_, err := l.Acquire(t.Context())
	refusal(t, err, telemetry.ReasonNoPermit, 0) // when a holder releases is unknown
	if lease, err := l.AcquireN(t.Context(), 0); err != nil || lease.Held() {
		t.Fatalf("AcquireN(0) when full = %v, held %v; want granted, holding nothing", err, lease.Held())
	}
	a.Release()
	a.Release() // frees nothing more
	b := mustAcquire(t, l, 2)
	if _, err := l.Acquire(t.Context()); err == nil {
		t.Fatal("a second Release freed permits again")
	}
	b.Release()
	if got := l.engine.InFlight(); got != 0 {
		t.Fatalf("in flight after every release = %d; want 0", got)
	}
}

func TestConcurrencyCost(t *testing.T) {
	l := newBulkheadLimiter(t, 3, WithName("db"))
	for _, cost := range []int{4, -2} {
		var ce *CostError
		if _, err := l.AcquireN(t.Context(), cost); !errors.As(err, &ce) || ce.Capacity != 3 || ce.Limiter != "db" {
			t.Fatalf("AcquireN(%d) error %v; want a *CostError with capacity 3", cost, err)
		}
	}
	if _, err := Concurrency(0); err == nil {
		t.Fatal("Concurrency(0) built")
	}
}

func TestConcurrencyHandsOffOnRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := newBulkheadLimiter(t, 1, WithQueueLimit(5))
		held := mustAcquire(t, l, 1)
		out := startWaiters(t.Context(), l, start, 1)
		time.Sleep(time.Second)
		select {
		case r := <-out:
			t.Fatalf("waiter got %v before any release", r.err)
		default:
		}
		held.Release()
		if r := <-out; r.err != nil || r.at != time.Second {
			t.Fatalf("waiter got %v at %v; want the released permit at 1s", r.err, r.at)
		}
		if got := l.engine.InFlight(); got != 1 {
			t.Fatalf("in flight = %d; want 1, the handed-off permit", got)
		}
	})
}

func TestConcurrencyQueueIsFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := newBulkheadLimiter(t, 3, WithQueueLimit(10))
		held := []Lease{mustAcquire(t, l, 1), mustAcquire(t, l, 1), mustAcquire(t, l, 1)}
		out := startWaiters(t.Context(), l, start, 2, 1, 1) // A needs two
		// While anyone waits, a newcomer queues too, even with a permit free.
		held[0].Release()
		ctxD, cancelD := context.WithCancel(t.Context())
		outD := startWaiters(ctxD, l, start, 1)
		cancelD()
		if r := <-outD; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("a newcomer got %v with others queued; want it queued until its cancel", r.err)
		}
		// Nobody behind A takes the free permit; the second one lets A in.
		time.Sleep(time.Second)
		held[1].Release()
		if r := <-out; r.id != 0 || r.err != nil || r.at != time.Second {
			t.Fatalf("first served %v; want A at 1s", r)
		}
		time.Sleep(time.Second)
		held[2].Release()
		if r := <-out; r.id != 1 || r.err != nil || r.at != 2*time.Second {
			t.Fatalf("second served %v; want B at 2s", r)
		}
		synctest.Wait()
		select {
		case r := <-out:
			t.Fatalf("C served %v with no permit free", r)
		default:
		}
	})
}

func TestConcurrencyQueueFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newBulkheadLimiter(t, 1, WithQueueLimit(2))
		held := mustAcquire(t, l, 1)
		out := startWaiters(t.Context(), l, time.Now(), 1, 1)
		_, err := l.Acquire(t.Context())
		refusal(t, err, telemetry.ReasonQueueFull, 0)
		held.Release()
		r := <-out
		if r.err != nil {
			t.Fatal(r.err)
		}
	})
	// The leftover waiter ends with the bubble's context (t.Context is
	// cancelled when the test function returns); goleak checks it left.
}

func TestConcurrencyCancelLeaksNoPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		l := newBulkheadLimiter(t, 3, WithQueueLimit(10))
		held := []Lease{mustAcquire(t, l, 1), mustAcquire(t, l, 1), mustAcquire(t, l, 1)}
		ctxA, cancelA := context.WithCancel(t.Context())
		outA := startWaiters(ctxA, l, start, 3)
		outB := startWaiters(t.Context(), l, start, 1)
		held[0].Release() // one free, but A (needing 3) is in front of B
		time.Sleep(time.Second)
		cancelA()
		if r := <-outA; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("cancelled waiter got %v; want context.Canceled", r.err)
		}
		// With A gone B fits, and gets the free permit at once.
		if r := <-outB; r.err != nil || r.at != time.Second {
			t.Fatalf("B got %v at %v; want a lease at 1s", r.err, r.at)
		}
		held[1].Release()
		held[2].Release()
		if got := l.engine.InFlight(); got != 1 {
			t.Fatalf("in flight = %d; want 1 (B's)", got)
		}
	})
}

// TestConcurrencyGrantRacesCancel hands permits to a waiter whose context
// has just ended, before it could take itself out of the queue: it must
// return ctx.Err() and give them back.
func TestConcurrencyGrantRacesCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newBulkheadLimiter(t, 2, WithQueueLimit(10))
		held := mustAcquire(t, l, 2)
		ctxA, cancelA := context.WithCancel(t.Context())
		outA := startWaiters(ctxA, l, time.Now(), 2)
		outB := startWaiters(t.Context(), l, time.Now(), 1)

		l.mu.Lock()
		cancelA() // A wakes on its context, then waits for mu...
		// ...and is granted meanwhile: what held.Release does, inlined so
		// it runs under the mu this test holds. (held stays unreleased.)
		l.engine.Release(held.Cost())
		l.serve()
		if l.queue.front() == nil || l.queue.front().cost != 1 {
			t.Fatal("A was not granted: the race did not happen")
		}
		l.mu.Unlock()
		if r := <-outA; !errors.Is(r.err, context.Canceled) {
			t.Fatalf("A got %v; want context.Canceled", r.err)
		}
		// A's permits went on to B, and one is left.
		if r := <-outB; r.err != nil {
			t.Fatalf("B got %v; want the permits A gave back", r.err)
		}
		if got := l.engine.InFlight(); got != 1 {
			t.Fatalf("in flight = %d; want 1 (B's)", got)
		}
	})
}

// TestConcurrencyGrantBeforeCancelKeepsTheLease is the other order: granted
// first, so the waiter has its permits, and its context ending after that
// is the caller's business.
func TestConcurrencyGrantBeforeCancelKeepsTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newBulkheadLimiter(t, 1, WithQueueLimit(10))
		held := mustAcquire(t, l, 1)
		ctx, cancel := context.WithCancel(t.Context())
		out := make(chan Lease, 1)
		go func() {
			lease, err := l.Acquire(ctx)
			if err != nil {
				t.Errorf("waiter got %v; want the lease granted before its cancel", err)
			}
			out <- lease
		}()
		synctest.Wait()
		held.Release()
		cancel()
		lease := <-out
		if !lease.Held() || l.engine.InFlight() != 1 {
			t.Fatalf("lease held %v, in flight %d; want held, 1", lease.Held(), l.engine.InFlight())
		}
		lease.Release()
		if got := l.engine.InFlight(); got != 0 {
			t.Fatalf("in flight after release = %d; want 0", got)
		}
	})
}

// metricValues collects mp's reader and returns each data point's value by
// instrument name and sorted attribute values, e.g.
// "headroom.limiter.leases{concurrency,db,concurrency,denied,queue_full}";
// a histogram's as name.count and name.sum.
func metricValues(t *testing.T, r *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, p := range metricstest.Collect(t, r) {
		var vals []string
		for _, kv := range p.Attrs.ToSlice() {
			vals = append(vals, kv.Value.String())
		}
		attrs := "{" + strings.Join(vals, ",") + "}"
		if p.Kind == "histogram" {
			out[p.Name+".count"+attrs] = float64(p.Count)
			out[p.Name+".sum"+attrs] = p.Sum
			continue
		}
		out[p.Name+attrs] = p.Value
	}
	return out
}

func TestConcurrencyAndWindowTelemetry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := metricstest.New(t)

		bh, err := Concurrency(2, WithName("db"), WithQueueLimit(1), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		held := mustAcquire(t, bh, 2)
		out := startWaiters(t.Context(), bh, time.Now(), 1)
		if _, err := bh.Acquire(t.Context()); err == nil {
			t.Fatal("granted with the queue full")
		}
		queued := metricValues(t, r)["headroom.limiter.queue.length{db,concurrency}"]
		time.Sleep(2 * time.Second)
		held.Release()
		<-out

		win, err := PerWindow(1, time.Minute, WithName("w"), WithMeterProvider(mp))
		if err != nil {
			t.Fatal(err)
		}
		mustAcquire(t, win, 1)
		if _, err := win.Acquire(t.Context()); err == nil {
			t.Fatal("granted beyond the window")
		}

		got := metricValues(t, r)
		for k, want := range map[string]float64{
			"headroom.limiter.leases{db,concurrency,acquired}":          2,
			"headroom.limiter.leases{db,concurrency,denied,queue_full}": 1,
			"headroom.limiter.limit{db,concurrency}":                    2,
			"headroom.limiter.queue.length{db,concurrency}":             0,
			"headroom.limiter.wait.duration.count{db,concurrency}":      1,
			"headroom.limiter.wait.duration.sum{db,concurrency}":        2,
			"headroom.limiter.leases{w,per_window,acquired}":            1,
			"headroom.limiter.leases{w,per_window,denied,no_permit}":    1,
		} {
			if v, ok := got[k]; !ok || v != want {
				t.Errorf("%s = %v (reported %v); want %v\nall: %v", k, v, ok, want, got)
			}
		}
		// What never happened makes no series: no zero-valued outcome,
		// no queue gauges for a limiter without a queue.
		for _, k := range []string{
			"headroom.limiter.leases{w,per_window,denied,queue_full}",
			"headroom.limiter.leases{db,concurrency,denied,no_permit}",
			"headroom.limiter.leases{db,concurrency,denied,deadline}",
			"headroom.limiter.leases{w,per_window,denied,deadline}",
			"headroom.limiter.leases{db,concurrency,denied,max_wait}",
			"headroom.limiter.leases{w,per_window,denied,max_wait}",
			"headroom.limiter.queue.length{w,per_window}",
		} {
			if v, ok := got[k]; ok {
				t.Errorf("%s reported (%v), though it never happened", k, v)
			}
		}
		if queued != 1 {
			t.Errorf("queue length while one waited = %v; want 1", queued)
		}
	})
}
