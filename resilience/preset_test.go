package resilience

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
)

// must is the policy, for a test that knows its options are valid.
func must(p *Policy, err error) *Policy {
	if err != nil {
		panic(err)
	}
	return p
}

// failing is an attempt that always fails, Transient.
func failing(context.Context) (int, error) { return 0, errors.New("connection reset") }

func TestPresetsArePollyAndFinagle(t *testing.T) {
	p := must(HTTP())
	if p.retries != 3 || p.timeout != 30*time.Second || p.attemptTimeout != 10*time.Second || p.maximumDelay != time.Minute {
		t.Errorf("HTTP(): retries %d, timeout %v, attempt %v, maximum delay %v; want Polly's 3, 30s, 10s and 60s",
			p.retries, p.timeout, p.attemptTimeout, p.maximumDelay)
	}
	bo := p.breaker.opts
	if bo.FailureRatio != 0.1 || bo.MinimumThroughput != 100 || bo.SamplingDuration != 30*time.Second || bo.BreakDuration != 5*time.Second {
		t.Errorf("HTTP()'s breaker %+v; want Polly's", bo)
	}
	if b := p.budget; b.withdrawal != 5000 || b.reserveRetries != 100 {
		t.Errorf("HTTP()'s budget: withdrawal %d, reserve %d; want Finagle's 5000 and 100", b.withdrawal, b.reserveRetries)
	}
	want := headroom.Backoff{Initial: headroom.Duration(2 * time.Second), Multiplier: 2, Jitter: new(0.25), Max: headroom.Duration(time.Minute)}
	if d := cmp.Diff(want, p.transient); d != "" {
		t.Errorf("HTTP()'s transient curve (-want +got):\n%s", d)
	}
	d := must(Default())
	if d.timeout != 0 || d.attemptTimeout != 0 || d.breaker == nil || d.budget == nil || d.transient.Initial != headroom.Duration(500*time.Millisecond) {
		t.Errorf("Default(): %+v", d)
	}
	if p := must(HTTP(WithBreaker(nil), WithBudget(nil), nil)); p.breaker != nil || p.budget != nil {
		t.Error("WithBreaker(nil), WithBudget(nil) kept them")
	}
}

// A preset with any one option is a working policy: HTTP's 10 s attempt
// timeout and 30 s sampling window follow a shorter Timeout, a longer
// AttemptTimeout, or a breaker of the caller's.
func TestPresetWithOneOptionWorks(t *testing.T) {
	consecutive, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 3})
	shortWindow, _ := NewBreaker(BreakerOptions{SamplingDuration: 4 * time.Second})
	budget, _ := NewBudget(BudgetOptions{})
	opts := map[string]Option{
		"WithName":             WithName("x"),
		"WithRetries":          WithRetries(0),
		"WithTimeout(2s)":      WithTimeout(2 * time.Second),
		"WithTimeout(2m)":      WithTimeout(2 * time.Minute),
		"WithTimeout(0)":       WithTimeout(0),
		"WithAttemptTimeout":   WithAttemptTimeout(time.Minute),
		"WithAttemptTimeout0":  WithAttemptTimeout(0),
		"WithBackoff":          WithBackoff(headroom.Backoff{Initial: headroom.Duration(time.Minute)}),
		"WithThrottledBackoff": WithThrottledBackoff(headroom.Backoff{Initial: headroom.Duration(2 * time.Minute)}),
		"WithMaximumDelay":     WithMaximumDelay(time.Second),
		"WithClassifier":       WithClassifier(DefaultClassify),
		"WithBreaker":          WithBreaker(consecutive),
		"WithBreaker(4s)":      WithBreaker(shortWindow),
		"WithBudget":           WithBudget(budget),
		"WithMeterProvider":    WithMeterProvider(nil),
	}
	for name, opt := range opts {
		for preset, build := range map[string]func(...Option) (*Policy, error){"HTTP": HTTP, "Default": Default} {
			if _, err := build(opt); err != nil {
				t.Errorf("%s(%s): %v", preset, name, err)
			}
		}
	}

	p := must(HTTP(WithTimeout(2 * time.Second)))
	if p.timeout != 2*time.Second || p.attemptTimeout != 2*time.Second/3 {
		t.Errorf("HTTP(WithTimeout(2s)): timeout %v, attempt %v; want 2s and a third of it", p.timeout, p.attemptTimeout)
	}
	p = must(HTTP(WithAttemptTimeout(time.Minute)))
	if p.timeout != 3*time.Minute || p.breaker.opts.SamplingDuration != 2*time.Minute {
		t.Errorf("HTTP(WithAttemptTimeout(1m)): timeout %v, sampling %v; want 3m and 2m",
			p.timeout, p.breaker.opts.SamplingDuration)
	}
	if p = must(HTTP(WithBreaker(shortWindow))); p.attemptTimeout != 2*time.Second {
		t.Errorf("HTTP(WithBreaker(4s window)): attempt %v; want 2s, half the window", p.attemptTimeout)
	}
	if p = must(Default(WithTimeout(2 * time.Second))); p.attemptTimeout != 0 {
		t.Errorf("Default(WithTimeout(2s)): attempt %v; want none, as Default has", p.attemptTimeout)
	}
}

// Options that conflict fail when the policy is built, all at once, never
// at the first call.
func TestPresetConflictFailsWhenBuilt(t *testing.T) {
	shortWindow, _ := NewBreaker(BreakerOptions{SamplingDuration: 4 * time.Second})
	for _, c := range []struct {
		name string
		opts []Option
		want []string
	}{
		{"timeout below attempt", []Option{WithTimeout(2 * time.Second), WithAttemptTimeout(5 * time.Second)},
			[]string{"AttemptTimeout"}},
		{"timeout below the preset's attempt, both set", []Option{WithTimeout(2 * time.Second), WithAttemptTimeout(10 * time.Second)},
			[]string{"AttemptTimeout"}},
		{"window below two attempts", []Option{WithBreaker(shortWindow), WithAttemptTimeout(5 * time.Second)},
			[]string{"Breaker.SamplingDuration"}},
		{"every problem", []Option{WithRetries(-1), WithTimeout(time.Second), WithAttemptTimeout(time.Minute)},
			[]string{"Retries", "AttemptTimeout"}},
	} {
		p, err := HTTP(c.opts...)
		if d := cmp.Diff(c.want, fields(err)); d != "" {
			t.Errorf("%s: problems (-want +got):\n%s", c.name, d)
		}
		if p != nil {
			t.Errorf("%s: policy %v with an error; want nil", c.name, p)
		}
	}
}
