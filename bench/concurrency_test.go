package bench

import (
	"context"
	"testing"

	"github.com/failsafe-go/failsafe-go/bulkhead"
	"github.com/headroom-go/headroom/limit"
)

// Every bulkhead here has far more slots than there are goroutines, so that
// none ever refuses or waits: what is measured is the cost of taking a slot
// and giving it back.
const concurrencySlots = 1 << 16

// concurrencyPeers builds, per library, a func that takes one slot, gives
// it back, and reports whether it got it.
var concurrencyPeers = []peer{
	{"headroom", func(b *testing.B) func() bool {
		lim, err := limit.Concurrency(concurrencySlots)
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
	{"chan", func(*testing.B) func() bool {
		// The idiom: a buffered channel as a counting semaphore.
		sem := make(chan struct{}, concurrencySlots)
		return func() bool {
			select {
			case sem <- struct{}{}:
				<-sem
				return true
			default:
				return false
			}
		}
	}},
	{"failsafe", func(*testing.B) func() bool {
		bh := bulkhead.New[any](concurrencySlots)
		return func() bool {
			if !bh.TryAcquirePermit() {
				return false
			}
			bh.ReleasePermit()
			return true
		}
	}},
}

// BenchmarkConcurrency compares taking and giving back one slot, serially
// and from RunParallel's goroutines (GOMAXPROCS of them, set by -cpu).
func BenchmarkConcurrency(b *testing.B) { comparePeers(b, concurrencyPeers) }
