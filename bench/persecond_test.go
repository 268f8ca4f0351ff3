package bench

import (
	"context"
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
var perSecondPeers = []struct {
	name string
	make func(b *testing.B) func() bool
}{
	{"headroom", func(b *testing.B) func() bool {
		lim, err := limit.PerSecond(perSecondRate, limit.WithBurst(perSecondRate))
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
func BenchmarkPerSecond(b *testing.B) {
	for _, p := range perSecondPeers {
		b.Run("mode=serial/lib="+p.name, func(b *testing.B) {
			admit := p.make(b)
			b.ReportAllocs()
			for b.Loop() {
				if !admit() {
					b.Fatal("refused")
				}
			}
		})
	}
	for _, p := range perSecondPeers {
		b.Run("mode=parallel/lib="+p.name, func(b *testing.B) {
			admit := p.make(b)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if !admit() {
						b.Error("refused")
						return
					}
				}
			})
		})
	}
}
