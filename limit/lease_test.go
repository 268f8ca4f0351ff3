package limit

import (
	"reflect"
	"testing"
	"time"
	"unsafe"

	"github.com/headroom-go/headroom/limit/adaptive"
)

// A Lease stays four words in at most four fields: the compiler keeps such
// a struct in registers, and moves a larger one through memory on every
// Acquire (PerSecond 45 → 53 ns, Concurrency 35 → 60 ns a grant).
func TestLeaseFitsInRegisters(t *testing.T) {
	typ := reflect.TypeFor[Lease]()
	if size := unsafe.Sizeof(Lease{}); size > 4*unsafe.Sizeof(uintptr(0)) || typ.NumField() > 4 {
		t.Errorf("Lease is %d bytes in %d fields, want at most 4 words in at most 4 fields", size, typ.NumField())
	}
}

// The Retry-After hint is kept in whole milliseconds, rounded up so that a
// caller never comes back early, and saturates at about 12.4 days; a later
// report replaces both, and keeps a hint only with Throttled.
func TestThrottleKeepsRetryAfterInMilliseconds(t *testing.T) {
	for _, c := range []struct {
		give, want time.Duration
	}{
		{0, 0},
		{-time.Second, 0},
		{time.Nanosecond, time.Millisecond},
		{1500 * time.Microsecond, 2 * time.Millisecond},
		{2 * time.Second, 2 * time.Second},
		{45 * time.Second, 45 * time.Second},
		{maxRetryAfter, maxRetryAfter},
		{100 * 24 * time.Hour, maxRetryAfter},
		{time.Duration(1<<63 - 1), maxRetryAfter},
	} {
		var l Lease
		l.spec.cost = 7
		l.Report(adaptive.Throttled, c.give)
		if l.Outcome() != adaptive.Throttled || l.RetryAfter() != c.want || l.Cost() != 7 {
			t.Errorf("Report(Throttled, %v): %v %v cost %d, want throttled %v cost 7", c.give, l.Outcome(), l.RetryAfter(), l.Cost(), c.want)
		}
	}
	var l Lease
	l.spec.cost = 7
	l.Report(adaptive.Throttled, 3*time.Second)
	l.Report(adaptive.Dropped, time.Second)
	if l.Outcome() != adaptive.Dropped || l.RetryAfter() != 0 {
		t.Errorf("Throttled then Dropped: %v %v, want the last report, dropped, and no hint", l.Outcome(), l.RetryAfter())
	}
	l.Report(adaptive.Ignored, 0)
	if l.Outcome() != adaptive.Ignored {
		t.Errorf("then Ignored: %v, want ignored", l.Outcome())
	}
	l.Report(adaptive.Success, 0)
	if l.Outcome() != adaptive.Success || l.Cost() != 7 {
		t.Errorf("then Success: %v cost %d, want success cost 7", l.Outcome(), l.Cost())
	}
}
