package resilience

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/headroom-go/headroom"
)

// fields lists the Field of every *headroom.ConfigError joined in err.
func fields(err error) []string {
	var out []string
	var walk func(error)
	walk = func(err error) {
		if j, ok := err.(interface{ Unwrap() []error }); ok {
			for _, e := range j.Unwrap() {
				walk(e)
			}
			return
		}
		var oe *headroom.ConfigError
		if errors.As(err, &oe) {
			out = append(out, oe.Field)
		}
	}
	if err != nil {
		walk(err)
	}
	return out
}

func TestValidateListsEveryProblem(t *testing.T) {
	br, _ := NewBreaker(HTTPBreakerOptions("x"))
	o := Options{
		Retries:          -1,
		Timeout:          5 * time.Second,
		AttemptTimeout:   20 * time.Second,
		MaximumDelay:     -time.Second,
		Backoff:          Backoff{Initial: -1, Multiplier: 0.5, Jitter: 1, Max: -1},
		ThrottledBackoff: Backoff{Multiplier: math.NaN(), Jitter: math.Inf(1)},
		Breaker:          br, // 30 s window < 2 × 20 s
	}
	_, err := New(o)
	want := []string{"Retries", "AttemptTimeout", "MaximumDelay",
		"Backoff.Initial", "Backoff.Multiplier", "Backoff.Jitter", "Backoff.Max",
		"ThrottledBackoff.Multiplier", "ThrottledBackoff.Jitter", "Breaker.SamplingDuration"}
	if d := cmp.Diff(want, fields(err)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if _, err := Run(context.Background(), HTTP(WithAttemptTimeout(time.Minute)), func(ctx context.Context) (int, error) {
		t.Error("called fn")
		return 0, nil
	}); len(fields(err)) != 2 {
		t.Errorf("Run with AttemptTimeout above Timeout and the window: %v", err)
	}
}

func TestPresetsValid(t *testing.T) {
	for _, p := range []*Policy{HTTP(), Default()} {
		if p.Err() != nil || p.Breaker() == nil || p.Budget() == nil {
			t.Errorf("%s: %v", p.Options().Name, p.Err())
		}
	}
	for _, o := range []Options{HTTPOptions(), DefaultOptions(), {}} {
		if err := o.Validate(); err != nil {
			t.Errorf("%q: %v", o.Name, err)
		}
	}
	o := HTTP().Options()
	if o.Retries != 3 || o.Timeout != 30*time.Second || o.AttemptTimeout != 10*time.Second ||
		o.Breaker.Options().FailureRatio != 0.1 || o.Breaker.Options().MinimumThroughput != 100 ||
		o.Breaker.Options().SamplingDuration != 30*time.Second || o.Breaker.Options().BreakDuration != 5*time.Second {
		t.Errorf("HTTP() is not Polly's standard pipeline: %+v", o)
	}
	if p := HTTP(WithBreaker(nil), WithBudget(nil), nil); p.Breaker() != nil || p.Budget() != nil {
		t.Error("WithBreaker(nil), WithBudget(nil) kept them")
	}
}
