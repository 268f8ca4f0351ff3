package headroom

import (
	"encoding/json"
	"errors"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBackoffWithDefaults(t *testing.T) {
	d := Backoff{Initial: Duration(time.Second), Multiplier: 2, Jitter: new(0.2), Max: Duration(time.Minute)}
	if got := (Backoff{}).WithDefaults(d); !cmp.Equal(got, d) {
		t.Errorf("zero Backoff with defaults = %+v; want the defaults %+v", got, d)
	}
	got := Backoff{Initial: Duration(2 * time.Minute), Jitter: new(0.0)}.WithDefaults(d)
	want := Backoff{Initial: Duration(2 * time.Minute), Multiplier: 2, Jitter: new(0.0), Max: Duration(2 * time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a long Initial and no jitter (-want +got):\n%s", diff)
	}
}

func TestBackoffValidate(t *testing.T) {
	if err := (Backoff{}).Validate(); err != nil {
		t.Errorf("zero Backoff: %v", err)
	}
	err := Backoff{Initial: Duration(time.Minute), Multiplier: math.NaN(), Jitter: new(1.5), Max: Duration(time.Second)}.Validate()
	var got []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *ConfigError
		if !errors.As(e, &ce) || !errors.Is(e, ErrConfig) {
			t.Fatalf("%T is not a *ConfigError", e)
		}
		got = append(got, ce.Field)
	}
	if diff := cmp.Diff([]string{"Multiplier", "Jitter", "Max"}, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// JSON tells a jitter of 0 (none) from a jitter left out (the default).
func TestBackoffJSON(t *testing.T) {
	var b Backoff
	if err := json.Unmarshal([]byte(`{"initial": "1s", "jitter": 0}`), &b); err != nil {
		t.Fatal(err)
	}
	want := Backoff{Initial: Duration(time.Second), Jitter: new(0.0)}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("Backoff (-want +got):\n%s", diff)
	}
	out, err := json.Marshal(Backoff{Max: Duration(time.Minute)})
	if err != nil || string(out) != `{"max":"1m0s"}` {
		t.Errorf("Marshal = %s, %v", out, err)
	}
}

// A bare number is refused, with what is wanted.
func TestDurationJSON(t *testing.T) {
	var d Duration
	err := json.Unmarshal([]byte(`60`), &d)
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Want != `a duration string such as "30s"` {
		t.Errorf("60: %v; want a *ConfigError asking for a duration string", err)
	}
	if err := json.Unmarshal([]byte(`"250ms"`), &d); err != nil || time.Duration(d) != 250*time.Millisecond {
		t.Errorf(`"250ms": %v, %v`, d, err)
	}
}
