package limit

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/headroom-go/headroom/internal/fairshare"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// queueingShapes builds each shape that queues, holding one permit (one
// unit, one a second) and a queue of the size given.
var queueingShapes = []struct {
	name  string
	build func(queue int) (Limiter, error)
}{
	{"PerSecond", func(queue int) (Limiter, error) { return PerSecond(1, 1, WithQueueLimit(queue)) }},
	{"PerWindow", func(queue int) (Limiter, error) { return PerWindow(1, time.Second, WithQueueLimit(queue)) }},
	{"Concurrency", func(queue int) (Limiter, error) { return Concurrency(1, WithQueueLimit(queue)) }},
	{"Adaptive", func(queue int) (Limiter, error) {
		return Adaptive(adaptive.ConcurrencyConfig{Minimum: 1, Maximum: 1, Initial: 1}, WithQueueLimit(queue))
	}},
	{"AdaptiveRate", func(queue int) (Limiter, error) {
		return AdaptiveRate(adaptive.RateConfig{MinUnitsPerMinute: 60, InitialUnitsPerMinute: 60, MaxUnitsPerMinute: 60}, WithQueueLimit(queue))
	}},
}

// onEachQueueingShape runs test in a synctest bubble on each shape of
// queueingShapes, built inside the bubble.
func onEachQueueingShape(t *testing.T, queue int, test func(t *testing.T, l Limiter)) {
	for _, shape := range queueingShapes {
		t.Run(shape.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				l, err := shape.build(queue)
				if err != nil {
					t.Fatal(err)
				}
				test(t, l)
			})
		})
	}
}

type served struct {
	id    int
	lease Lease
	err   error
}

// queueAt starts one waiter of each priority on l, in order, each queued
// before the next comes.
func queueAt(ctx context.Context, l Limiter, out chan<- served, first int, ps ...Priority) {
	for i, p := range ps {
		go func() {
			lease, err := l.Acquire(WithPriority(ctx, p))
			out <- served{first + i, lease, err}
		}()
		synctest.Wait()
	}
}

// servedInOrder takes a lease from out for each of want, releasing each, and
// checks they came in the order of want's ids.
func servedInOrder(t *testing.T, out <-chan served, want ...int) {
	t.Helper()
	var order []int
	for range want {
		r := <-out
		if r.err != nil {
			t.Fatalf("waiter %d: %v", r.id, r.err)
		}
		order = append(order, r.id)
		r.lease.Release()
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Fatalf("served in the wrong order (-want +got):\n%s", diff)
	}
}

// TestQueuesServeByPriority queues three background waiters, then a
// critical one and a default one, on every shape: the critical goes first,
// the default next, the background ones last in the order they came.
func TestQueuesServeByPriority(t *testing.T) {
	onEachQueueingShape(t, 100, func(t *testing.T, l Limiter) {
		held := mustAcquire(t, l, 1)
		out := make(chan served, 5)
		queueAt(t.Context(), l, out, 0, Background, Background, Background, Critical, Default)
		held.Release()
		servedInOrder(t, out, 3, 4, 0, 1, 2)
	})
}

// TestWithoutPrioritiesQueuesStayFIFO queues waiters without a priority
// and with Default named: one level, first come first served.
func TestWithoutPrioritiesQueuesStayFIFO(t *testing.T) {
	onEachQueueingShape(t, 100, func(t *testing.T, l Limiter) {
		held := mustAcquire(t, l, 1)
		out := make(chan served, 6)
		for id := range 6 {
			ctx := t.Context()
			if id%2 == 1 {
				ctx = WithPriority(ctx, Default)
			}
			go func() {
				lease, err := l.Acquire(ctx)
				out <- served{id, lease, err}
			}()
			synctest.Wait()
		}
		held.Release()
		var order []int
		for range 6 {
			r := <-out
			order = append(order, r.id)
			r.lease.Release()
		}
		if diff := cmp.Diff([]int{0, 1, 2, 3, 4, 5}, order); diff != "" {
			t.Fatalf("served out of arrival order (-want +got):\n%s", diff)
		}
	})
}

// TestStarvationIsBounded keeps critical waiters queued without a break
// behind one background waiter that came first: the background one is
// served after at most fairshare.Bound critical ones, and after some.
func TestStarvationIsBounded(t *testing.T) {
	bound := fairshare.Bound(Background.level(), Critical.level(), 0, 1)
	onEachQueueingShape(t, 100, func(t *testing.T, l Limiter) {
		held := mustAcquire(t, l, 1)
		out := make(chan served, 3*bound)
		queueAt(t.Context(), l, out, 0, Background, Critical, Critical)
		held.Release()
		next, before := 3, 0
		for {
			r := <-out
			if r.err != nil {
				t.Fatalf("waiter %d: %v", r.id, r.err)
			}
			if r.id == 0 {
				break
			}
			before++
			if before > bound {
				t.Fatalf("%d critical waiters served before the background one; the bound is %d", before, bound)
			}
			queueAt(t.Context(), l, out, next, Critical) // two stay queued
			next++
			r.lease.Release()
		}
		if before == 0 {
			t.Fatal("the background waiter went first; critical ones should pass it")
		}
		t.Logf("%d critical waiters served before the background one (bound %d)", before, bound)
	})
}

func TestInvalidPriorityIsRefusedWhereRead(t *testing.T) {
	onEachQueueingShape(t, 100, func(t *testing.T, l Limiter) {
		bad := WithPriority(t.Context(), Priority(7))
		// A permit is free: nothing reads the priority.
		lease, err := l.Acquire(bad)
		if err != nil {
			t.Fatalf("with a permit free: %v; want a lease (the fast path reads no priority)", err)
		}
		defer lease.Release()
		_, err = l.Acquire(bad)
		var pe *PriorityError
		if !errors.As(err, &pe) || !errors.Is(err, ErrPriority) || pe.Value != "Priority(7)" {
			t.Fatalf("a waiter with Priority(7) got %v; want a *PriorityError naming it", err)
		}
	})
}

func TestParsePriority(t *testing.T) {
	for _, p := range []Priority{Critical, Default, Background} {
		b, err := p.MarshalText()
		if err != nil {
			t.Fatal(err)
		}
		var q Priority
		if err := q.UnmarshalText(b); err != nil || q != p {
			t.Fatalf("%s round trip: %v, %v", p, q, err)
		}
	}
	_, err := ParsePriority("urgent")
	if !errors.Is(err, ErrPriority) || err.Error() != `limit: priority "urgent" is not a level; use critical, default or background` {
		t.Fatalf("ParsePriority(urgent): %v", err)
	}
	if _, err := Priority(-2).MarshalText(); !errors.Is(err, ErrPriority) {
		t.Fatalf("MarshalText of Priority(-2): %v; want ErrPriority", err)
	}
	if p := PriorityFrom(context.Background()); p != Default {
		t.Fatalf("no priority reads as %v; want default", p)
	}
}

// TestFullQueueShedsTheLowestLevelFirst fills a queue of 3 with a default
// waiter and two background ones: a critical newcomer sheds the latest
// background waiter, a default one the other, and then the queue holds
// nothing lower than a default newcomer, which is refused.
func TestFullQueueShedsTheLowestLevelFirst(t *testing.T) {
	onEachQueueingShape(t, 3, func(t *testing.T, l Limiter) {
		held := mustAcquire(t, l, 1)
		out := make(chan served, 5)
		queueAt(t.Context(), l, out, 0, Background, Default, Background)
		queueAt(t.Context(), l, out, 3, Critical)
		if r := <-out; r.id != 2 {
			t.Fatalf("waiter %d left first (%v); want the latest background one shed", r.id, r.err)
		} else {
			refusal(t, r.err, telemetry.ReasonShed, 0)
		}
		queueAt(t.Context(), l, out, 4, Default)
		if r := <-out; r.id != 0 {
			t.Fatalf("waiter %d left next (%v); want the other background one shed", r.id, r.err)
		} else {
			refusal(t, r.err, telemetry.ReasonShed, 0)
		}
		_, err := l.Acquire(t.Context())
		var rl *RateLimitedError
		if !errors.As(err, &rl) || rl.Reason != telemetry.ReasonQueueFull {
			t.Fatalf("a default newcomer to a queue of default and critical waiters got %v; want queue_full", err)
		}
		held.Release()
		servedInOrder(t, out, 3, 1, 4)
	})
}
