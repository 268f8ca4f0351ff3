package concurrency

import (
	"errors"
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

func TestBulkheadNewRejectsOutOfBounds(t *testing.T) {
	for _, limit := range []int{-1, MaxLimit + 1} {
		b, err := New(limit)
		want := &headroom.ConfigError{Package: "concurrency", Field: "limit", Value: limit, Want: "0 to 65536 permits"}
		var got *headroom.ConfigError
		errors.As(err, &got)
		if diff := cmp.Diff(want, got); diff != "" || !errors.Is(err, headroom.ErrConfig) || b != nil {
			t.Fatalf("New(%d) error (-want +got):\n%s", limit, diff)
		}
	}
	if b, err := New(0); err != nil || take(b, 1) {
		t.Fatalf("New(0) = %v, %v; want a bulkhead that refuses", b, err)
	}
	if _, ok := newBulkhead(t, 0).Take(0); ok {
		t.Fatal("New(0) gave a ticket")
	}
}

// A ticket frees its permit once: a copy given again frees nothing, even
// after the slot has served another holder.
func TestBulkheadTicketFreesOnce(t *testing.T) {
	b := newBulkhead(t, 1)
	a, ok := b.Take(0)
	if !ok || !b.Holds(a) || b.InFlight() != 1 {
		t.Fatal("Take refused within the limit")
	}
	if _, ok := b.Take(0); ok {
		t.Fatal("Take granted beyond the limit")
	}
	copyOfA := a
	if !b.Give(a) || b.Holds(a) {
		t.Fatal("Give of a held ticket did not free it")
	}
	c, ok := b.Take(0)
	if !ok || c == a {
		t.Fatalf("Take after a Give = %x, %v; want a new ticket for the same slot", c, ok)
	}
	if b.Give(copyOfA) || !b.Holds(c) || b.InFlight() != 1 {
		t.Fatal("a copy of a given ticket freed the slot's next holder")
	}
	if !b.Give(c) || b.Give(c) || b.InFlight() != 0 {
		t.Fatal("a ticket freed twice, or not at all")
	}
	if b.Give(1<<16|7) || b.Holds(7) {
		t.Fatal("a ticket of a slot the bulkhead has not freed something")
	}
}

func TestBulkheadAnonymousPermits(t *testing.T) {
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
	if take(b, -1) || take(b, 4) {
		t.Fatal("a negative cost, or one above the limit, granted")
	}
	b.Release(2)
	if take(b, 3) {
		t.Fatal("granted 3 with 1 held and limit 3")
	}
	if b.InFlight() != 1 || !take(b, 2) || b.InFlight() != 3 {
		t.Fatalf("want 2 more permits with 1 held and limit 3; in flight %d", b.InFlight())
	}
	// Release never frees a ticket's permit, and stops when none is left.
	b.Release(3)
	tk, _ := b.Take(0)
	b.Release(5)
	if !b.Holds(tk) || b.InFlight() != 1 {
		t.Fatal("Release freed a ticket's permit")
	}
}

// TestBulkheadNeverAboveLimit races takers of both kinds and checks, with a
// counter of its own, that no more than the limit is ever held, and that
// nothing is left held.
func TestBulkheadNeverAboveLimit(t *testing.T) {
	const limit = 5
	b := newBulkhead(t, limit)
	var held, peak atomic.Int64
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 20000 {
				cost := 1 + (g+i)%3
				var ticket uint64
				if cost == 1 {
					var ok bool
					if ticket, ok = b.Take(0); !ok {
						continue
					}
				} else if !take(b, cost) {
					continue
				}
				n := held.Add(int64(cost))
				for p := peak.Load(); n > p && !peak.CompareAndSwap(p, n); p = peak.Load() {
				}
				held.Add(-int64(cost))
				if cost == 1 {
					b.Give(ticket)
				} else {
					b.Release(cost)
				}
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

func BenchmarkBulkheadTakeGive(b *testing.B) {
	bh := newBulkhead(b, MaxLimit)
	for b.Loop() {
		t, _ := bh.Take(0)
		bh.Give(t)
	}
}
