package window

import (
	"fmt"
	"math"
	"sync"
	"testing"
	"time"
)

func TestTokenBucketGrantedCountsEveryPermitTryAcquireGranted(t *testing.T) {
	b := newBucket(t, 1e9, 1000)
	var want int64
	now := time.Duration(0)
	// Costs that wrap the word's count by one, by several and by none.
	for i, cost := range []int{1, 1, 1, 1, 1, 3, 5, 2, 4, 7, 1, 1, 8, 1, 0, 13, 1} {
		now += time.Second // a full bucket every time
		if ok, _ := b.TryAcquire(now, cost); !ok {
			t.Fatalf("grant %d of %d refused", i, cost)
		}
		want += int64(cost)
		if got := b.Granted(); got != want {
			t.Fatalf("after grant %d (cost %d) Granted = %d, want %d", i, cost, got, want)
		}
	}
	// Refusals, bookings and their cancellation are not TryAcquire's grants.
	now += time.Second
	if ok, _ := b.TryAcquire(now, 1000); !ok {
		t.Fatal("a full bucket refused its burst")
	}
	if ok, _ := b.TryAcquire(now, 1); ok {
		t.Fatal("an empty bucket granted")
	}
	b.TryAcquire(now, 1001)
	at, ok := b.Reserve(now, 3, time.Second)
	if !ok {
		t.Fatal("Reserve refused")
	}
	b.Cancel(now, at, 3)
	if got := b.Granted(); got != want+1000 {
		t.Fatalf("Granted after refusals, a booking and its cancellation = %d, want %d", got, want+1000)
	}
}

func TestTokenBucketGrantedCountsAnUnlimitedBucket(t *testing.T) {
	b, err := NewTokenBucket(math.Inf(1), 10)
	if err != nil {
		t.Fatal(err)
	}
	for range 5 {
		b.TryAcquire(0, 3)
	}
	if got := b.Granted(); got != 15 {
		t.Fatalf("Granted = %d, want 15", got)
	}
}

func TestTokenBucketGrantedIsExactUnderConcurrencyAndNeverStepsBack(t *testing.T) {
	const takers, each = 4, 20000
	b := newBucket(t, 1e9, 1<<30)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var readerErr error
	var reader sync.WaitGroup
	reader.Go(func() {
		var last int64
		for {
			select {
			case <-stop:
				return
			default:
			}
			n := b.Granted()
			if n < last {
				readerErr = fmt.Errorf("Granted stepped back from %d to %d", last, n)
				return
			}
			last = n
		}
	})
	for g := range takers {
		wg.Go(func() {
			for i := range each {
				if ok, _ := b.TryAcquire(0, 1+(g+i)%3); !ok {
					t.Error("refused")
					return
				}
			}
		})
	}
	wg.Wait()
	close(stop)
	reader.Wait()
	if readerErr != nil {
		t.Fatal(readerErr)
	}
	var want int64
	for g := range takers {
		for i := range each {
			want += int64(1 + (g+i)%3)
		}
	}
	if got := b.Granted(); got != want {
		t.Fatalf("Granted = %d, want %d", got, want)
	}
}

func TestTokenBucketCountBitsSurviveTheLatestTimes(t *testing.T) {
	// The latest TAT the bounds allow, just below 2^62: a time just below
	// 2^61 ns, the longest span, and a booking the longest way ahead.
	b := newBucket(t, 1e9/float64(maxSpan), 1) // one permit in 2^60 ns
	now := time.Duration(1<<61 - 1)
	b.TryAcquire(now, 1)
	if _, ok := b.Reserve(now, 1, time.Duration(maxSpan)); !ok {
		t.Fatal("Reserve within the bounds refused")
	}
	if got, want := b.tat(), int64(now)+2*maxSpan; got != want {
		t.Fatalf("TAT = %d, want %d", got, want)
	}
	if got := b.Granted(); got != 1 {
		t.Fatalf("Granted = %d, want 1", got)
	}
}
