package resilience

import (
	"encoding/json"
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

// The values a policy is built with are checked all at once: each problem
// named after its setting.
func TestBuildListsEveryProblem(t *testing.T) {
	br, _ := NewBreaker(BreakerOptions{})
	budget, _ := NewBudget(BudgetOptions{})
	o := Options{
		Timeout:          headroom.Duration(5 * time.Second),
		AttemptTimeout:   headroom.Duration(20 * time.Second),
		Backoff:          headroom.Backoff{Initial: -1, Multiplier: 0.5, Jitter: new(1.5), Max: -1},
		ThrottledBackoff: headroom.Backoff{Multiplier: math.NaN(), Jitter: new(math.Inf(1))},
		Breaker:          br, // 30 s window < 2 × 20 s
		NoBudget:         true,
		Budget:           budget, // one budget or none
	}
	p, err := bare(o)
	want := []string{"NoBudget", "AttemptTimeout",
		"Backoff.Initial", "Backoff.Multiplier", "Backoff.Jitter", "Backoff.Max",
		"ThrottledBackoff.Multiplier", "ThrottledBackoff.Jitter", "Breaker.SamplingDuration"}
	if d := cmp.Diff(want, fields(err)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if p != nil {
		t.Errorf("a policy %v with an error; want nil", p)
	}
	if !errors.Is(err, headroom.ErrConfig) {
		t.Errorf("errors.Is(err, headroom.ErrConfig) = false for %v", err)
	}
}

// Options as data keep the preset's value where they are zero, and turn a
// setting off below zero; Validate lists what HTTP would refuse.
func TestOptionsKeepThePreset(t *testing.T) {
	var zero Options
	if err := zero.Validate(); err != nil {
		t.Fatalf("the zero Options: %v", err)
	}
	p := must(HTTP(zero))
	if p.retries != 3 || p.timeout != 30*time.Second || p.attemptTimeout != 10*time.Second || p.breaker == nil || p.budget == nil {
		t.Errorf("HTTP(Options{}) = %+v; want the preset", p)
	}
	p = must(HTTP(Options{Retries: -1, Timeout: -1, AttemptTimeout: -1, MaximumDelay: -1, NoBreaker: true, NoBudget: true}))
	if p.retries != 0 || p.timeout != 0 || p.attemptTimeout != 0 || p.maximumDelay != 0 || p.breaker != nil || p.budget != nil {
		t.Errorf("every setting below zero = %+v; want each off", p)
	}
	// A first wait given alone keeps the preset's cap of a minute.
	p = must(HTTP(Options{Backoff: headroom.Backoff{Initial: headroom.Duration(5 * time.Second)}}))
	if p.transient.Max != headroom.Duration(time.Minute) {
		t.Errorf("HTTP(Options{Backoff: Initial 5s}) caps at %v; want the preset's 1m", p.transient.Max)
	}
	p = must(HTTP(Options{Timeout: headroom.Duration(3 * time.Second)}))
	if p.attemptTimeout != time.Second {
		t.Errorf("a timeout of 3s alone gives attempts of %v; want 1s, a third of it", p.attemptTimeout)
	}
	br, _ := NewBreaker(BreakerOptions{})
	bad := Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: headroom.Duration(5 * time.Second), NoBreaker: true, Breaker: br}
	if d := cmp.Diff([]string{"NoBreaker", "AttemptTimeout"}, fields(bad.Validate())); d != "" {
		t.Errorf("Validate (-want +got):\n%s", d)
	}
}

// The zero Options applied to Default, without its breaker and budget, is
// what Default says: three retries and nothing else.
func TestZeroOptions(t *testing.T) {
	p, err := bare(Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := Try(t.Context(), p, failing)
	if r.Stop != StopAttemptsExhausted || len(r.Attempts) != 1 {
		t.Errorf("stop %v after %d attempts; want attempts_exhausted after 1", r.Stop, len(r.Attempts))
	}
}

// Options read from JSON: durations as strings, the backoff curves by
// field, and the settings that are Go values left out.
func TestOptionsJSON(t *testing.T) {
	var o Options
	err := json.Unmarshal([]byte(`{"name": "api", "retries": 2, "timeout": "20s", "attemptTimeout": "5s",
		"maximumDelay": "1m", "backoff": {"initial": "1s", "jitter": 0}, "throttledBackoff": {"max": "2m"}}`), &o)
	if err != nil {
		t.Fatal(err)
	}
	want := Options{Name: "api", Retries: 2, Timeout: headroom.Duration(20 * time.Second),
		AttemptTimeout: headroom.Duration(5 * time.Second), MaximumDelay: headroom.Duration(time.Minute),
		Backoff:          headroom.Backoff{Initial: headroom.Duration(time.Second), Jitter: new(0.0)},
		ThrottledBackoff: headroom.Backoff{Max: headroom.Duration(2 * time.Minute)}}
	if d := cmp.Diff(want, o); d != "" {
		t.Errorf("Options (-want +got):\n%s", d)
	}
	if err := json.Unmarshal([]byte(`{"timeout": 30}`), &o); err == nil {
		t.Error(`"timeout": 30 read as a duration`)
	}
	b, err := json.Marshal(Options{Timeout: headroom.Duration(30 * time.Second)})
	if err != nil || string(b) != `{"timeout":"30s"}` {
		t.Errorf("Marshal = %s, %v", b, err)
	}
}

// bare is the policy of o's values as they are, 0 meaning none: Default
// with each zero turned off, and no breaker or budget unless o has one.
func bare(o Options) (*Policy, error) {
	for _, d := range []*headroom.Duration{&o.Timeout, &o.AttemptTimeout, &o.MaximumDelay} {
		if *d == 0 {
			*d = -1
		}
	}
	if o.Retries == 0 {
		o.Retries = -1
	}
	o.NoBreaker, o.NoBudget = o.NoBreaker || o.Breaker == nil, o.NoBudget || o.Budget == nil
	return Default(o)
}
