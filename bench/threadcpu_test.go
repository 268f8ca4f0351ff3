//go:build linux

package bench

import (
	"context"
	"os"
	"runtime"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/headroom-go/headroom/limit"
	"golang.org/x/time/rate"
)

// TestThreadCPUPerSecond counts PerSecond's fast path beside x/time/rate's
// Allow in the CPU time of the one thread that runs them, so that the other
// processes of a shared machine do not count: wall-clock benchmarks there
// swing by ±30 % and more. It runs only when asked:
//
//	HEADROOM_THREAD_CPU=1 go test -run ThreadCPU -v
//
// Each figure is the median of 31 rounds of 10^6 calls, the rounds of all
// the rows interleaved on one locked OS thread. Beside the two limiters, the
// parts a token bucket cannot do without: one monotonic clock read, and the
// read plus one compare-and-swap.
func TestThreadCPUPerSecond(t *testing.T) {
	if os.Getenv("HEADROOM_THREAD_CPU") == "" {
		t.Skip("set HEADROOM_THREAD_CPU=1 to run it")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	lim, err := limit.PerSecond(perSecondRate, perSecondRate)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	xrate := rate.NewLimiter(perSecondRate, perSecondRate)
	epoch := time.Now()
	var word atomic.Int64
	var sink time.Duration
	rows := []struct {
		name string
		call func()
	}{
		{"headroom Acquire+Release", func() { lease, _ := lim.Acquire(ctx); lease.Release() }},
		{"x/time/rate Allow", func() { xrate.Allow() }},
		{"time.Since", func() { sink += time.Since(epoch) }},
		{"time.Since + CAS", func() {
			now, w := int64(time.Since(epoch)), word.Load()
			word.CompareAndSwap(w, max(w, now)+1)
		}},
	}
	const rounds, calls = 31, 1_000_000
	perCall := make([][]float64, len(rows))
	for range rounds {
		for i, r := range rows {
			start := threadCPU()
			for range calls {
				r.call()
			}
			perCall[i] = append(perCall[i], float64(threadCPU()-start)/calls)
		}
	}
	peer := median(perCall[1])
	for i, r := range rows {
		m := median(perCall[i])
		t.Logf("%-26s %6.1f ns  %.3f of Allow", r.name, m, m/peer)
	}
	_ = sink
}

// threadCPU is the CPU time the calling thread has used.
func threadCPU() time.Duration {
	const clockThreadCPUTime = 3 // CLOCK_THREAD_CPUTIME_ID
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func median(xs []float64) float64 {
	xs = slices.Clone(xs)
	slices.Sort(xs)
	return xs[len(xs)/2]
}
