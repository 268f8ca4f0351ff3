package backoffcurve

import (
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/problems"
)

// The curve is b's, without jitter when b has none, capped at Max and at
// the ceiling a time.Duration can hold with jitter.
func TestReset(t *testing.T) {
	var e backoff.ExponentialBackOff
	Reset(&e, headroom.Backoff{Initial: headroom.Duration(time.Second), Multiplier: 2, Max: headroom.Duration(3 * time.Second)})
	var got []time.Duration
	for range 4 {
		got = append(got, e.NextBackOff())
	}
	if d := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 3 * time.Second, 3 * time.Second}, got); d != "" {
		t.Errorf("waits (-want +got):\n%s", d)
	}
	Reset(&e, headroom.Backoff{Initial: headroom.Duration(time.Hour * 1e5), Multiplier: 1, Jitter: new(1.0), Max: headroom.Duration(time.Hour * 1e5)})
	for range 100 {
		if d := e.NextBackOff(); d < 0 || d > 2*ceiling {
			t.Fatalf("wait %v with full jitter on a huge curve; want within [0, %v]", d, 2*ceiling)
		}
	}
}

func TestWithDefaults(t *testing.T) {
	d := headroom.Backoff{Initial: headroom.Duration(time.Second), Multiplier: 2, Jitter: new(0.2), Max: headroom.Duration(time.Minute)}
	if got := WithDefaults(headroom.Backoff{}, d); !cmp.Equal(got, d) {
		t.Errorf("zero Backoff with defaults = %+v; want the defaults %+v", got, d)
	}
	got := WithDefaults(headroom.Backoff{Initial: headroom.Duration(2 * time.Minute), Jitter: new(0.0)}, d)
	want := headroom.Backoff{Initial: headroom.Duration(2 * time.Minute), Multiplier: 2, Jitter: new(0.0), Max: headroom.Duration(2 * time.Minute)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a long Initial and no jitter (-want +got):\n%s", diff)
	}
}

// Check names each problem under the setting that holds the Backoff, in
// Go or in JSON as the List spells fields.
func TestCheck(t *testing.T) {
	l := problems.New("quota").At("Backoff")
	Check(headroom.Backoff{Initial: headroom.Duration(time.Minute), Multiplier: math.NaN(), Jitter: new(1.5), Max: headroom.Duration(time.Second)}, l)
	Check(headroom.Backoff{Initial: -1}, l)
	var got []string
	for _, e := range l.Err().(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if !errors.As(e, &ce) || !errors.Is(e, headroom.ErrConfig) {
			t.Fatalf("%T is not a *headroom.ConfigError", e)
		}
		got = append(got, e.Error())
	}
	want := []string{
		"quota: Backoff.Multiplier = NaN: want 0 (the default) or a finite factor of 1 or more",
		"quota: Backoff.Jitter = 1.5: want a fraction in [0, 1]",
		"quota: Backoff.Max = 1s: want at least Initial (1m0s)",
		`quota: Backoff.Initial = -1ns: want 0 (the default) or a duration above 0, such as "1s"`,
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	type holder struct {
		Backoff headroom.Backoff `json:"backoff"`
	}
	j := problems.JSON("quota", reflect.TypeFor[holder](), nil)
	Check(headroom.Backoff{Jitter: new(2.0), Max: -1}, j.At("Backoff"))
	if got, want := j.Err().Error(), "quota: backoff.jitter = 2: want a fraction in [0, 1]\n"+
		`quota: backoff.max = -1ns: want 0 (the default) or a duration above 0, such as "1m"`; got != want {
		t.Errorf("in JSON:\n got %s\nwant %s", got, want)
	}
	l = problems.New("quota")
	if Check(headroom.Backoff{}, l); l.Err() != nil {
		t.Errorf("zero Backoff: %v", l.Err())
	}
}
