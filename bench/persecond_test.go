package bench

import (
	"context"
	"os"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/failsafe-go/failsafe-go/ratelimiter"
	"github.com/headroom-go/headroom/limit"
	uber "go.uber.org/ratelimit"
	"golang.org/x/time/rate"
)

// Every limiter here is set to a billion permits a second (and, where it has
// one, a billion of burst), so that none ever refuses or sleeps: what is
// measured is the cost of admitting a call that may go.
const perSecondRate = 1e9

// perSecondPeers builds, per library, a func that admits one call and
// reports whether it was admitted.
var perSecondPeers = []peer{
	{"headroom", func(b *testing.B) func() bool {
		lim, err := limit.PerSecond(perSecondRate, perSecondRate)
		if err != nil {
			b.Fatal(err)
		}
		ctx := context.Background()
		return func() bool {
			lease, err := lim.Acquire(ctx)
			lease.Release()
			return err == nil
		}
	}},
	{"xrate", func(*testing.B) func() bool {
		lim := rate.NewLimiter(perSecondRate, perSecondRate)
		return lim.Allow
	}},
	{"uber", func(*testing.B) func() bool {
		// Take blocks until its slot; at this rate the slot is always now.
		lim := uber.New(perSecondRate)
		return func() bool { lim.Take(); return true }
	}},
	{"failsafe", func(*testing.B) func() bool {
		lim := ratelimiter.NewSmooth[any](perSecondRate, time.Second)
		return lim.TryAcquirePermit
	}},
}

// BenchmarkPerSecond compares admitting one call, serially and from
// RunParallel's goroutines (GOMAXPROCS of them, set by -cpu).
func BenchmarkPerSecond(b *testing.B) { comparePeers(b, perSecondPeers) }

// TestPerSecondWaitAccuracy compares how much of the rate waiting callers
// achieve, in real time, so it runs only when asked:
//
//	HEADROOM_WAIT_ACCURACY=1 go test -run WaitAccuracy -v
//
// For each library in turn: 1000 permits a second with a burst of 1, and 4
// goroutines that wait for every permit for 2 s.
func TestPerSecondWaitAccuracy(t *testing.T) {
	if os.Getenv("HEADROOM_WAIT_ACCURACY") == "" {
		t.Skip("real-time measurement; set HEADROOM_WAIT_ACCURACY=1 to run it")
	}
	const perSecond, run, goroutines = 1000, 2 * time.Second, 4
	waiters := []struct {
		name string
		make func() func(context.Context) error
	}{
		{"headroom", func() func(context.Context) error {
			lim, _ := limit.PerSecond(perSecond, 1, limit.WithQueueLimit(goroutines))
			return func(ctx context.Context) error {
				lease, err := lim.Acquire(ctx)
				lease.Release()
				return err
			}
		}},
		{"xrate", func() func(context.Context) error {
			return rate.NewLimiter(perSecond, 1).Wait
		}},
	}
	for _, w := range waiters {
		wait := w.make()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var granted atomic.Int64
		start := time.Now()
		var wg sync.WaitGroup
		for range goroutines {
			wg.Go(func() {
				for time.Since(start) < run {
					if err := wait(ctx); err != nil {
						t.Error(err)
						return
					}
					if time.Since(start) <= run {
						granted.Add(1)
					}
				}
			})
		}
		wg.Wait()
		cancel()
		t.Logf("%-8s %d permits in %v: %.4f of the rate", w.name, granted.Load(), run, float64(granted.Load())/(perSecond*run.Seconds()+1))
	}
}
