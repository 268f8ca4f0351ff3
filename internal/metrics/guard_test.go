package metrics

import (
	"context"
	"strconv"
	"testing"

	"github.com/headroom-go/headroom/telemetry"
)

// A guard keyed by something unbounded labels its first quotaKeysMax keys
// apart for good, whatever order it reports them in, and counts the
// refusals of the rest as _other, which reports no gauges.
func TestGuardKeysPastTheBoundFoldIntoOther(t *testing.T) {
	r, mp := newSDK(t)
	const keys = quotaKeysMax + 50
	reversed := false
	g := NewGuard(mp, "quota", nil, func(report func(KeyState)) {
		for i := range keys {
			if reversed {
				i = keys - 1 - i
			}
			report(KeyState{Key: "k" + strconv.Itoa(i), Known: true, Limit: 10, Remaining: 5})
		}
	})
	defer g.Close()
	gauged := func() map[string]bool {
		got := map[string]bool{}
		for _, p := range collect(t, r) {
			if p.Name == telemetry.QuotaRemainingName {
				got[p.Attrs[telemetry.AttrQuotaKey]] = true
			}
		}
		return got
	}
	first := gauged()
	if len(first) != quotaKeysMax || first[otherKey] {
		t.Fatalf("%d keys with gauges (_other among them: %v), want the first %d", len(first), first[otherKey], quotaKeysMax)
	}
	reversed = true // the keys the guard reports first now are those it left out
	if again := gauged(); len(again) != quotaKeysMax || !sameKeys(first, again) {
		t.Errorf("the keys with gauges changed between collections: %d keys, %d of them new", len(again), len(again)-common(first, again))
	}
	ctx := context.Background()
	for i := range keys {
		g.Refused(ctx, "k"+strconv.Itoa(i), telemetry.ReasonReserve)
	}
	refused := map[string]float64{}
	for _, p := range collect(t, r) {
		if p.Name == telemetry.QuotaRefusalsName {
			refused[p.Attrs[telemetry.AttrQuotaKey]] += p.Value
		}
	}
	if len(refused) != quotaKeysMax+1 || refused[otherKey] != keys-quotaKeysMax {
		t.Errorf("refusals in %d series, %v of them as %s; want %d keys and %d as %s",
			len(refused), refused[otherKey], otherKey, quotaKeysMax, keys-quotaKeysMax, otherKey)
	}
	for k := range refused {
		if k != otherKey && !first[k] {
			t.Errorf("key %s counts its refusals apart without gauges", k)
		}
	}
}

func sameKeys(a, b map[string]bool) bool { return common(a, b) == len(a) && len(a) == len(b) }

func common(a, b map[string]bool) int {
	n := 0
	for k := range a {
		if b[k] {
			n++
		}
	}
	return n
}
