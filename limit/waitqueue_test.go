package limit

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// order lists the queue's costs from the front.
func order(q *waitQueue) []int {
	var costs []int
	for w := q.front(); w != nil; w = w.next {
		costs = append(costs, w.cost)
	}
	return costs
}

func sameInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestQueueFIFOAndPermitCapacity(t *testing.T) {
	q := &waitQueue{limit: 5}
	if !q.empty() || q.front() != nil {
		t.Fatal("new queue not empty")
	}
	a := q.push(2, Default.level())
	b := q.push(1, Default.level())
	c := q.push(2, Default.level())
	if got := order(q); !sameInts(got, []int{2, 1, 2}) || q.front() != a {
		t.Fatalf("order %v; want [2 1 2] with a in front", got)
	}
	if q.queued != 5 || q.fits(1) || !q.fits(0) {
		t.Fatalf("queued %d, fits(1) %v; want 5 permits queued and no room for more", q.queued, q.fits(1))
	}
	q.remove(b) // from the middle
	q.remove(b) // twice does nothing
	if got := order(q); !sameInts(got, []int{2, 2}) || q.queued != 4 || !q.fits(1) || q.fits(2) {
		t.Fatalf("after removing the middle: order %v, queued %d; want [2 2], 4", got, q.queued)
	}
	q.grant(a)
	if !a.granted || len(a.ready) != 1 || q.front() != c {
		t.Fatalf("grant: granted %v, signals %d; want granted with one signal, c in front", a.granted, len(a.ready))
	}
	q.remove(c) // the last one
	if !q.empty() || q.tail != nil || q.queued != 0 {
		t.Fatal("queue not empty after every waiter left")
	}
	q.put(a)
	if len(a.ready) != 0 || a.granted {
		t.Fatal("put left a pending signal or the granted mark")
	}
}

func TestQueueWakeSignalsOnce(t *testing.T) {
	q := &waitQueue{limit: 1}
	w := q.push(1, Default.level())
	q.wake(w)
	q.wake(w) // a second signal says nothing new and must not block
	if len(w.ready) != 1 || w.granted {
		t.Fatalf("wake: %d signals, granted %v; want one signal, not granted", len(w.ready), w.granted)
	}
}

func TestQueueSleep(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &waitQueue{limit: 3}
		w := q.push(1, Default.level())
		start := time.Now()
		if got := w.sleep(t.Context(), 2*time.Second); got != wokenTimer || time.Since(start) != 2*time.Second {
			t.Fatalf("sleep = %d after %v; want the timer after 2s", got, time.Since(start))
		}
		go func() {
			time.Sleep(time.Second)
			q.wake(w)
		}()
		if got := w.sleep(t.Context(), time.Hour); got != wokenReady || time.Since(start) != 3*time.Second {
			t.Fatalf("sleep = %d after %v; want the signal after 3s", got, time.Since(start))
		}
		// The stopped timer leaves nothing behind for the next sleep.
		ctx, cancel := context.WithTimeout(t.Context(), 500*time.Millisecond)
		defer cancel()
		if got := w.sleep(ctx, 0); got != wokenDone || time.Since(start) != 3500*time.Millisecond {
			t.Fatalf("sleep = %d after %v; want the context after 3.5s", got, time.Since(start))
		}
		q.remove(w)
		q.put(w)
		// A recycled waiter (or a fresh one: the pool may drop items) comes
		// back clean: no stale signal, no stale timer value.
		w2 := q.push(1, Default.level())
		if w2.granted || len(w2.ready) != 0 {
			t.Fatal("pushed waiter carries a grant or a signal")
		}
		if got := w2.sleep(t.Context(), time.Second); got != wokenTimer {
			t.Fatalf("reused waiter sleep = %d; want the timer", got)
		}
	})
}
