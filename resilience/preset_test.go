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
	p := must(HTTP(Options{}))
	if p.retries != 3 || p.timeout != 30*time.Second || p.attemptTimeout != 10*time.Second || p.maximumDelay != time.Minute {
		t.Errorf("HTTP(Options{}): retries %d, timeout %v, attempt %v, maximum delay %v; want Polly's 3, 30s, 10s and 60s",
			p.retries, p.timeout, p.attemptTimeout, p.maximumDelay)
	}
	bo := p.breaker.opts
	if bo.FailureRatio != 0.1 || bo.MinimumThroughput != 100 || bo.SamplingDuration != 30*time.Second || bo.BreakDuration != 5*time.Second {
		t.Errorf("HTTP(Options{})'s breaker %+v; want Polly's", bo)
	}
	if b := p.budget; b.withdrawal != 5000 || b.reserveRetries != 100 {
		t.Errorf("HTTP(Options{})'s budget: withdrawal %d, reserve %d; want Finagle's 5000 and 100", b.withdrawal, b.reserveRetries)
	}
	want := headroom.Backoff{Initial: headroom.Duration(2 * time.Second), Multiplier: 2, Jitter: new(0.25), Max: headroom.Duration(time.Minute)}
	if d := cmp.Diff(want, p.transient); d != "" {
		t.Errorf("HTTP(Options{})'s transient curve (-want +got):\n%s", d)
	}
	d := must(Default(Options{}))
	if d.timeout != 0 || d.attemptTimeout != 0 || d.breaker == nil || d.budget == nil || d.transient.Initial != headroom.Duration(500*time.Millisecond) {
		t.Errorf("Default(Options{}): %+v", d)
	}
	if p := must(HTTP(Options{NoBreaker: true, NoBudget: true})); p.breaker != nil || p.budget != nil {
		t.Error("NoBreaker, NoBudget kept them")
	}
}

// A preset with any one option is a working policy: HTTP's 10 s attempt
// timeout and 30 s sampling window follow a shorter Timeout, a longer
// AttemptTimeout, or a breaker of the caller's.
func TestPresetWithOneOptionWorks(t *testing.T) {
	consecutive, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 3})
	shortWindow, _ := NewBreaker(BreakerOptions{SamplingDuration: 4 * time.Second})
	budget, _ := NewBudget(BudgetOptions{})
	opts := map[string]Options{
		"Name":             {Name: "x"},
		"Retries":          {Retries: -1},
		"Timeout(2s)":      {Timeout: headroom.Duration(2 * time.Second)},
		"Timeout(2m)":      {Timeout: headroom.Duration(2 * time.Minute)},
		"Timeout(none)":    {Timeout: -1},
		"AttemptTimeout":   {AttemptTimeout: headroom.Duration(time.Minute)},
		"AttemptTimeout0":  {AttemptTimeout: -1},
		"Backoff":          {Backoff: headroom.Backoff{Initial: headroom.Duration(time.Minute)}},
		"ThrottledBackoff": {ThrottledBackoff: headroom.Backoff{Initial: headroom.Duration(2 * time.Minute)}},
		"MaximumDelay":     {MaximumDelay: headroom.Duration(time.Second)},
		"Classify":         {Classify: DefaultClassify},
		"Breaker":          {Breaker: consecutive},
		"Breaker(4s)":      {Breaker: shortWindow},
		"Budget":           {Budget: budget},
		"NoBreaker":        {NoBreaker: true},
		"NoBudget":         {NoBudget: true},
	}
	for name, o := range opts {
		for preset, build := range map[string]func(Options) (*Policy, error){"HTTP": HTTP, "Default": Default} {
			if _, err := build(o); err != nil {
				t.Errorf("%s(Options{%s}): %v", preset, name, err)
			}
			if err := o.Validate(); err != nil {
				t.Errorf("Options{%s}.Validate() = %v", name, err)
			}
		}
	}

	p := must(HTTP(Options{Timeout: headroom.Duration(2 * time.Second)}))
	if p.timeout != 2*time.Second || p.attemptTimeout != 2*time.Second/3 {
		t.Errorf("HTTP(Options{Timeout: headroom.Duration(2s)}): timeout %v, attempt %v; want 2s and a third of it", p.timeout, p.attemptTimeout)
	}
	p = must(HTTP(Options{AttemptTimeout: headroom.Duration(time.Minute)}))
	if p.timeout != 3*time.Minute || p.breaker.opts.SamplingDuration != 2*time.Minute {
		t.Errorf("HTTP(Options{AttemptTimeout: headroom.Duration(1m)}): timeout %v, sampling %v; want 3m and 2m",
			p.timeout, p.breaker.opts.SamplingDuration)
	}
	if p = must(HTTP(Options{Breaker: shortWindow})); p.attemptTimeout != 2*time.Second {
		t.Errorf("HTTP(Options{Breaker: 4s window}): attempt %v; want 2s, half the window", p.attemptTimeout)
	}
	if p = must(Default(Options{Timeout: headroom.Duration(2 * time.Second)})); p.attemptTimeout != 0 {
		t.Errorf("Default(Options{Timeout: headroom.Duration(2s)}): attempt %v; want none, as Default has", p.attemptTimeout)
	}
}

// Options that conflict fail when the policy is built, all at once, never
// at the first call.
func TestPresetConflictFailsWhenBuilt(t *testing.T) {
	shortWindow, _ := NewBreaker(BreakerOptions{SamplingDuration: 4 * time.Second})
	shortBudget, _ := NewBudget(BudgetOptions{})
	for _, c := range []struct {
		name string
		opts Options
		want []string
	}{
		{"timeout below attempt", Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: headroom.Duration(5 * time.Second)},
			[]string{"AttemptTimeout"}},
		{"timeout below the preset's attempt, both set", Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: headroom.Duration(10 * time.Second)},
			[]string{"AttemptTimeout"}},
		{"window below two attempts", Options{Breaker: shortWindow, AttemptTimeout: headroom.Duration(5 * time.Second)},
			[]string{"Breaker.SamplingDuration"}},
		{"every problem", Options{Backoff: headroom.Backoff{Multiplier: 0.5}, Timeout: headroom.Duration(time.Second), AttemptTimeout: headroom.Duration(time.Minute), NoBudget: true, Budget: shortBudget},
			[]string{"NoBudget", "AttemptTimeout", "Backoff.Multiplier"}},
	} {
		if d := cmp.Diff(c.want, fields(c.opts.Validate())); d != "" {
			t.Errorf("%s: Validate's problems (-want +got):\n%s", c.name, d)
		}
		p, err := HTTP(c.opts)
		if d := cmp.Diff(c.want, fields(err)); d != "" {
			t.Errorf("%s: problems (-want +got):\n%s", c.name, d)
		}
		if p != nil {
			t.Errorf("%s: policy %v with an error; want nil", c.name, p)
		}
	}
}
