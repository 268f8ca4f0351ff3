package headroom

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

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
