package acceptance

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(ns ...int) []time.Duration {
		ds := make([]time.Duration, len(ns))
		for i, n := range ns {
			ds[i] = time.Duration(n) * time.Millisecond
		}
		return ds
	}
	// 1…20 ms shuffled: the nearest-rank p95 of 20 values is the 19th.
	twenty := ms(7, 3, 20, 1, 15, 9, 12, 2, 18, 5, 11, 16, 4, 19, 8, 14, 6, 17, 10, 13)
	tests := []struct {
		name string
		ds   []time.Duration
		p    float64
		want time.Duration
	}{
		{"none", nil, 0.95, 0},
		{"one", ms(42), 0.95, 42 * time.Millisecond},
		{"p95 of 20", twenty, 0.95, 19 * time.Millisecond},
		{"p50 of 20", twenty, 0.50, 10 * time.Millisecond},
		{"p100", ms(3, 1, 2), 1, 3 * time.Millisecond},
		{"p95 of 100 is the 95th", ms(seq(100)...), 0.95, 95 * time.Millisecond},
		{"p95 of 101 is the 96th", ms(seq(101)...), 0.95, 96 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := percentile(tt.ds, tt.p); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = n - i
	}
	return s
}

func TestShares(t *testing.T) {
	r := Result{Units: 950, Allowance: 1000, Attempts: 400, Throttled: 4}
	if got := r.Share(); got != 0.95 {
		t.Errorf("share %v, want 0.95", got)
	}
	if got := r.ThrottledShare(); got != 0.01 {
		t.Errorf("throttled share %v, want 0.01", got)
	}
	if got := (Result{}).ThrottledShare(); got != 0 {
		t.Errorf("no attempts: throttled share %v, want 0", got)
	}
	if got := (Result{Units: 5}).Share(); got != 0 {
		t.Errorf("no allowance: share %v, want 0", got)
	}
}

func TestCostMixDraw(t *testing.T) {
	if err := CostMixed.Validate(); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	counts := map[int]int{}
	const n = 100_000
	for range n {
		counts[CostMixed.Draw(rng)]++
	}
	for i, c := range CostMixed.Costs {
		got, want := float64(counts[c])/n, float64(CostMixed.Weights[i])/100
		if got < want-0.01 || got > want+0.01 {
			t.Errorf("cost %d drawn %.3f of the time, want %.2f", c, got, want)
		}
	}
	if got := CostMixed.Mean(); got != 1.75 {
		t.Errorf("mean %v, want 1.75", got)
	}
}

func TestCostMixValidate(t *testing.T) {
	for _, tt := range []struct {
		m    CostMix
		want string
	}{
		{CostMix{}, "no costs"},
		{CostMix{Costs: []int{1, 2}, Weights: []int{1}}, "2 costs but 1 weights"},
		{CostMix{Costs: []int{0}, Weights: []int{1}}, "cost 0 is 0"},
		{CostMix{Costs: []int{1}, Weights: []int{-1}}, "weight 0 is -1"},
		{CostMix{Costs: []int{1}, Weights: []int{0}}, "sum to 0"},
	} {
		err := tt.m.Validate()
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want one saying %q", tt.m, err, tt.want)
		}
	}
}

func TestGoalsCheck(t *testing.T) {
	cell := Cell{Name: "c", Callers: 8, Server: ServerSpec{Headers: PublishDraft6}}
	good := CellResult{Cell: cell,
		Subject: Result{Client: "headroom", Units: 960, Allowance: 1000, Attempts: 1000, Throttled: 10},
		Peer:    Result{Client: "retryablehttp", Units: 900, Allowance: 1000},
	}
	if m := cell.goals().Check(good); len(m) != 0 {
		t.Errorf("a cell that met its goals missed %q", m)
	}
	bad := good
	bad.Subject.Units, bad.Subject.Throttled, bad.Subject.SelfImposed = 800, 50, 2
	misses := cell.goals().Check(bad)
	for _, want := range []string{"used 80.0% of the allowance (800 of 1000 units): goal ≥ 95%",
		"5.0% of attempts throttled (50 of 1000): goal ≤ 1%",
		"800 units accepted, fewer than retryablehttp's 900",
		"2 calls failed on the client's own limiter's refusal"} {
		if !containsPrefix(misses, want) {
			t.Errorf("misses %q lack %q", misses, want)
		}
	}

	outage := CellResult{Cell: cell,
		Subject: Result{Client: "headroom", Units: 960, Allowance: 1000, Attempts: 1100, Throttled: 120, Unavailable: 100,
			Failed: 1, Failures: map[string]int{"status 503": 1}},
	}
	misses = OutageGoals(PublishDraft6).Check(outage)
	for _, want := range []string{"100 attempts answered 503 in the outage, 12.5 per caller: goal ≤ 2 per caller",
		"2.0% of attempts throttled (20 of 1000): goal ≤ 1%", "1 calls failed (status 503 ×1): goal 0"} {
		if !containsPrefix(misses, want) {
			t.Errorf("outage misses %q lack %q", misses, want)
		}
	}
}

func containsPrefix(lines []string, prefix string) bool {
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			return true
		}
	}
	return false
}

// TestNotBelowThePeer: a subject within 1% of the allowance below the peer
// (and the reserve, where the server publishes) is not below it; nor is
// one with 97% of the units of a peer that had more than 5% of its
// attempts throttled.
func TestNotBelowThePeer(t *testing.T) {
	for _, c := range []struct {
		headers                 Headers
		units, peer             int64
		peerAttempts, peerThrot int64
		met                     bool
	}{
		{PublishNone, 990, 1000, 1000, 0, true},   // 1% of the allowance of 1,000
		{PublishNone, 989, 1000, 1000, 0, false},  // below it
		{PublishDraft6, 970, 1000, 1000, 0, true}, // the reserve's 2% and 1%
		{PublishDraft6, 969, 1000, 1000, 0, false},
		{PublishNone, 970, 1000, 1000, 51, true},  // the peer had 5.1% throttled: 97% of its units
		{PublishNone, 969, 1000, 1000, 51, false}, // less than 97%
		{PublishNone, 970, 1000, 1000, 50, false}, // the peer had 5.0%: not above
	} {
		res := CellResult{Cell: Cell{Callers: 1, Server: ServerSpec{Headers: c.headers}},
			Subject: Result{Client: "headroom", Units: c.units, Allowance: 1000},
			Peer:    Result{Client: "retryablehttp", Units: c.peer, Allowance: 1000, Attempts: c.peerAttempts, Throttled: c.peerThrot},
		}
		missed := containsPrefix(DefaultGoals(c.headers).Check(res), fmt.Sprintf("%d units accepted, fewer than", c.units))
		if missed == c.met {
			t.Errorf("%s: %d units against the peer's %d with %d of %d throttled: met %v, want %v",
				c.headers, c.units, c.peer, c.peerThrot, c.peerAttempts, !missed, c.met)
		}
	}
}
