package resilience

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
)

type serverErr struct{ after time.Duration }

func (e serverErr) Error() string             { return "503" }
func (e serverErr) RetryAfter() time.Duration { return e.after }

func TestDefaultClassify(t *testing.T) {
	for _, c := range []struct {
		err  error
		want Verdict
	}{
		{nil, Verdict{Kind: Success}},
		{errors.New("reset"), Verdict{Kind: Transient}},
		{context.Canceled, Verdict{Kind: Transient}},
		{fmt.Errorf("get: %w", &limit.RateLimitedError{RetryAfter: time.Second}), Verdict{Kind: Throttled, SelfImposed: true, RetryAfter: time.Second}},
		{&limit.CostError{Cost: -1}, Verdict{Kind: Permanent}},
		{&ThrottledError{RetryAfter: 7 * time.Second}, Verdict{Kind: Throttled, RetryAfter: 7 * time.Second}},
		{&ThrottledError{RetryAfter: -7}, Verdict{Kind: Throttled}},
		{fmt.Errorf("x: %w", &PermanentError{Err: errors.New("404")}), Verdict{Kind: Permanent}},
		{&TimeoutError{Err: context.DeadlineExceeded}, Verdict{Kind: Transient}},
		{&BreakerOpenError{RetryAfter: 2 * time.Second}, Verdict{Kind: Throttled, SelfImposed: true, RetryAfter: 2 * time.Second}},
		{serverErr{3 * time.Second}, Verdict{Kind: Throttled, RetryAfter: 3 * time.Second}},
		// The error's own verdict wins over what it wraps.
		{&PermanentError{Err: &limit.RateLimitedError{}}, Verdict{Kind: Permanent}},
	} {
		if got := DefaultClassify(c.err); got != c.want {
			t.Errorf("DefaultClassify(%v) = %v; want %v", c.err, got, c.want)
		}
	}
}

func TestCustomClassifier(t *testing.T) {
	notFound := errors.New("404")
	p, _ := bare(Options{Retries: 3, Classify: func(err error) Verdict {
		if errors.Is(err, notFound) {
			return Verdict{Kind: Permanent}
		}
		return DefaultClassify(err)
	}})
	r := Try(t.Context(), p, func(ctx context.Context) (int, error) { return 0, notFound })
	if r.Stop != StopPermanent || len(r.Attempts) != 1 {
		t.Errorf("stop %v after %d attempts", r.Stop, len(r.Attempts))
	}
}

func TestStrings(t *testing.T) {
	for _, s := range []fmt.Stringer{Kind(9), StopReason(99), State(7),
		Verdict{Kind: Throttled, SelfImposed: true, RetryAfter: time.Second}} {
		if s.String() == "" {
			t.Errorf("%#v: empty", s)
		}
	}
	for _, e := range []error{&ThrottledError{Err: errors.New("429"), RetryAfter: time.Second}, &PermanentError{},
		&TimeoutError{Timeout: time.Second}, &BreakerOpenError{Breaker: "b", RetryAfter: time.Second}, &headroom.ConfigError{Package: "resilience", Field: "F"}} {
		if e.Error() == "" {
			t.Errorf("%T: empty", e)
		}
	}
}
