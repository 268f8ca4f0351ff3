package sim

import (
	"slices"
	"testing"
	"time"
)

// Scenarios lists each scenario Config takes, in the command's order.
func TestScenariosAreTheConfigs(t *testing.T) {
	for _, sc := range Scenarios() {
		if err := (Config{Scenario: sc}).Defaults().Validate(); err != nil {
			t.Errorf("scenario %q: %v", sc, err)
		}
	}
	if got := Scenarios(); !slices.Equal(got, []string{"steady", "drop", "join", "mixed"}) {
		t.Errorf("Scenarios() = %v", got)
	}
}

// HasBurst names the kinds whose Burst a valid configuration may set.
func TestHasBurstIsWhatValidateTakes(t *testing.T) {
	for _, kind := range ServerKinds() {
		err := Config{Quota: 50, Server: Server{Kind: kind, Window: time.Second, Burst: 20}}.Defaults().Validate()
		if HasBurst(kind) != (err == nil) {
			t.Errorf("%s: HasBurst %v, a burst of 20 validates to %v", kind, HasBurst(kind), err)
		}
	}
}
