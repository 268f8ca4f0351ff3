package backoffcurve

import (
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom"
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

func TestProblems(t *testing.T) {
	var got []string
	for _, e := range Problems("quota", "Backoff", headroom.Backoff{Initial: -1, Jitter: new(2.0)}) {
		got = append(got, e.Error())
	}
	want := []string{`quota: Backoff.Initial = -1ns: want 0 (the default) or a duration above 0, such as "1s"`,
		"quota: Backoff.Jitter = 2: want a fraction in [0, 1]"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if p := Problems("quota", "Backoff", headroom.Backoff{}); p != nil {
		t.Errorf("zero Backoff: %v", p)
	}
}
