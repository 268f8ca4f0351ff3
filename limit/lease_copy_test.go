package limit

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// releaseByValue is a helper that takes its lease by value and releases it,
// as code written before the caller's own defer lease.Release() might.
func releaseByValue(l Lease) { l.Release() }

// Releasing a copy of a lease and then the lease itself frees its permits
// once: a bulkhead of 2 never lets a third holder in.
func TestReleasedCopyFreesPermitsOnce(t *testing.T) {
	for _, c := range []struct {
		name string
		make func() (Limiter, error)
	}{
		{"concurrency", func() (Limiter, error) { return Concurrency(2) }},
		{"adaptive", func() (Limiter, error) {
			return New(Options{Adaptive: &adaptive.ConcurrencyConfig{Minimum: 2, Initial: 2, Maximum: 2}})
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			l, err := c.make()
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			a, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			b, err := l.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			releaseByValue(a)
			a.Release() // the caller's own release of the same lease
			if a.Held() {
				t.Error("the original is held after its copy was released")
			}
			c1, err := l.Acquire(ctx)
			if err != nil {
				t.Fatalf("the permit the copy freed: %v", err)
			}
			if _, err := l.Acquire(ctx); !errors.Is(err, ErrRateLimited) {
				t.Fatalf("a third holder beside b and c1: err = %v, want a refusal", err)
			}
			b.Release()
			c1.Release()
		})
	}
}

// A copy released late, after its record has gone on to serve another
// lease, frees nothing of that other lease.
func TestLateCopyDoesNotFreeAnotherLease(t *testing.T) {
	l, err := Concurrency(1)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	first, _ := l.Acquire(ctx)
	stale := first
	first.Release()
	second, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale.Release()
	if !second.Held() {
		t.Fatal("a stale copy's Release ended another lease")
	}
	if _, err := l.Acquire(ctx); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("second holder while the first is held: err = %v", err)
	}
	second.Release()
}

// Copies released at once from many goroutines free the permits once.
func TestConcurrentCopiesReleaseOnce(t *testing.T) {
	l, err := Concurrency(3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for range 100 {
		lease, _ := l.AcquireN(ctx, 2)
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() { c := lease; c.Release() })
		}
		wg.Wait()
		other, err := l.AcquireN(ctx, 1) // one permit left, whatever raced
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.AcquireN(ctx, 3); !errors.Is(err, ErrRateLimited) {
			t.Fatalf("3 permits granted with 1 held: %v", err)
		}
		other.Release()
	}
}

type countingReleaser struct{ released []Lease }

func (r *countingReleaser) ReleaseLease(l Lease) { r.released = append(r.released, l) }

// A lease made by NewLease reports to its Releaser once, with the copy that
// was released.
func TestNewLeaseReleasesOnce(t *testing.T) {
	r := &countingReleaser{}
	lease := NewLease(r, 3, time.Second)
	if !lease.Held() || lease.Cost() != 3 || lease.Granted() != time.Second {
		t.Fatalf("held %v cost %d granted %v", lease.Held(), lease.Cost(), lease.Granted())
	}
	c := lease
	c.Report(adaptive.Throttled, 2*time.Second)
	c.Release()
	lease.Release()
	if len(r.released) != 1 || r.released[0].Outcome() != adaptive.Throttled || r.released[0].RetryAfter() != 2*time.Second {
		t.Fatalf("released %+v; want one throttled release", r.released)
	}
}

// A lease of several permits from a bulkhead, released by a copy and then
// by itself, frees its permits once too, and so does one of a single permit
// whose slot has since served another holder.
func TestReleasedCopyOfAReusedSlotFreesNothing(t *testing.T) {
	l, err := Concurrency(3)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	two, err := l.AcquireN(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	releaseByValue(two)
	two.Release()
	one, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stale := one
	one.Release()
	again, err := l.AcquireN(ctx, 3) // every slot, the one just freed among them
	if err != nil {
		t.Fatalf("all three permits after both leases were released: %v", err)
	}
	stale.Release() // a copy of a lease whose slot serves another holder now
	if _, err := l.Acquire(ctx); !errors.Is(err, ErrRateLimited) {
		t.Fatalf("a fourth permit after a stale copy's release: err = %v, want a refusal", err)
	}
	again.Release()
	if n := l.(*bulkhead).engine.InFlight(); n != 0 {
		t.Fatalf("%d permits held after every release; want 0", n)
	}
}
