package concurrency

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
)

func newBulkhead(t testing.TB, limit int) *Bulkhead {
	t.Helper()
	b, err := New(limit)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// take is TryAcquire's ok: a bulkhead reads no time and names no wait.
func take(b *Bulkhead, cost int) bool {
	ok, _ := b.TryAcquire(0, cost)
	return ok
}

func TestBulkheadNewRejectsNegative(t *testing.T) {
	b, err := New(-1)
	want := &headroom.ConfigError{Package: "concurrency", Field: "limit", Value: -1, Want: "0 or more permits"}
	var got *headroom.ConfigError
	errors.As(err, &got)
	if diff := cmp.Diff(want, got); diff != "" || !errors.Is(err, headroom.ErrConfig) || b != nil {
		t.Fatalf("New(-1) error (-want +got):\n%s", diff)
	}
	if b, err := New(0); err != nil || take(b, 1) {
		t.Fatalf("New(0) = %v, %v; want a bulkhead that refuses", b, err)
	}
}

func TestBulkheadAcquireRelease(t *testing.T) {
	b := newBulkhead(t, 3)
	if !take(b, 2) || !take(b, 1) {
		t.Fatal("refused within the limit")
	}
	if take(b, 1) {
		t.Fatal("granted beyond the limit")
	}
	if !take(b, 0) {
		t.Fatal("cost 0 refused when full")
	}
	if take(b, -1) {
		t.Fatal("negative cost granted")
	}
	if got := b.InFlight(); got != 3 {
		t.Fatalf("InFlight = %d; want 3", got)
	}
	b.Release(2)
	if take(b, 3) {
		t.Fatal("granted 3 with 1 held and limit 3")
	}
	if !take(b, 2) {
		t.Fatal("refused 2 with 1 held and limit 3")
	}
	if got := b.Available(); got != 0 {
		t.Fatalf("Available = %d; want 0", got)
	}
}

// A cost so large that in-flight+cost would wrap below zero is refused, not
// granted as if it were small; so is anything more once a huge limit is
// full.
func TestBulkheadHugeCostNeverWraps(t *testing.T) {
	b := newBulkhead(t, 10)
	if !take(b, 1) {
		t.Fatal("refused within the limit")
	}
	if take(b, math.MaxInt) {
		t.Fatalf("granted a cost of MaxInt with a limit of 10; in flight %d", b.InFlight())
	}
	huge := newBulkhead(t, math.MaxInt)
	if !take(huge, math.MaxInt) {
		t.Fatal("refused a cost of MaxInt under a limit of MaxInt")
	}
	if take(huge, 1) || huge.Available() != 0 {
		t.Fatalf("granted a unit beyond a full limit of MaxInt; in flight %d", huge.InFlight())
	}
}

func TestBulkheadSetLimitRevokesNothing(t *testing.T) {
	b := newBulkhead(t, 4)
	if !take(b, 4) {
		t.Fatal("refused within the limit")
	}
	b.SetLimit(2)
	if b.Limit() != 2 || b.InFlight() != 4 || b.Available() != 0 {
		t.Fatalf("after SetLimit(2): limit %d, in flight %d, available %d; want 2, 4, 0", b.Limit(), b.InFlight(), b.Available())
	}
	b.Release(1)
	if take(b, 1) {
		t.Fatal("granted with 3 held over a limit of 2")
	}
	b.Release(2)
	if !take(b, 1) || take(b, 1) {
		t.Fatal("want exactly one more permit with 1 held and limit 2")
	}
	b.SetLimit(-5)
	if b.Limit() != 0 {
		t.Fatalf("SetLimit(-5) left limit %d; want 0", b.Limit())
	}
}

func TestBulkheadOverReleaseStopsAtZero(t *testing.T) {
	b := newBulkhead(t, 2)
	take(b, 1)
	b.Release(5)
	if got := b.InFlight(); got != 0 {
		t.Fatalf("InFlight after over-release = %d; want 0", got)
	}
	if !take(b, 2) || take(b, 1) {
		t.Fatal("over-release let the bulkhead admit more than its limit")
	}
}

// TestBulkheadNeverAboveLimit races acquirers and checks, with a counter of
// its own, that no more than the limit is ever held, and that all of the
// limit is usable.
func TestBulkheadNeverAboveLimit(t *testing.T) {
	const limit = 5
	b := newBulkhead(t, limit)
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20000 {
				cost := 1 + (g+i)%3
				if !take(b, cost) {
					continue
				}
				n := held.Add(int64(cost))
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				held.Add(-int64(cost))
				b.Release(cost)
			}
		})
	}
	wg.Wait()
	if p := peak.Load(); p > limit {
		t.Fatalf("peak held %d; want at most %d", p, limit)
	}
	if b.InFlight() != 0 {
		t.Fatalf("InFlight after all released = %d; want 0", b.InFlight())
	}
}

func BenchmarkBulkheadAcquireRelease(b *testing.B) {
	bh := newBulkhead(b, 1<<30)
	b.ReportAllocs()
	for b.Loop() {
		bh.TryAcquire(0, 1)
		bh.Release(1)
	}
}
