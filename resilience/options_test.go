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

func TestNewListsEveryProblem(t *testing.T) {
	br, _ := NewBreaker(BreakerOptions{})
	o := Options{
		Retries:          -1,
		Timeout:          headroom.Duration(5 * time.Second),
		AttemptTimeout:   headroom.Duration(20 * time.Second),
		MaximumDelay:     headroom.Duration(-time.Second),
		Backoff:          headroom.Backoff{Initial: -1, Multiplier: 0.5, Jitter: new(1.5), Max: -1},
		ThrottledBackoff: headroom.Backoff{Multiplier: math.NaN(), Jitter: new(math.Inf(1))},
		Breaker:          br, // 30 s window < 2 × 20 s
	}
	p, err := New(o)
	want := []string{"Retries", "AttemptTimeout", "MaximumDelay",
		"Backoff.Initial", "Backoff.Multiplier", "Backoff.Jitter", "Backoff.Max",
		"ThrottledBackoff.Multiplier", "ThrottledBackoff.Jitter", "Breaker.SamplingDuration"}
	if d := cmp.Diff(want, fields(err)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if p == nil || p.Err() != err {
		t.Errorf("New returned policy %v; want one that carries the error", p)
	}
	if !errors.Is(err, headroom.ErrConfig) {
		t.Errorf("errors.Is(err, headroom.ErrConfig) = false for %v", err)
	}
}

// The zero Options is a complete configuration: one attempt, no timeout,
// no breaker, no budget.
func TestZeroOptions(t *testing.T) {
	p, err := New(Options{})
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
