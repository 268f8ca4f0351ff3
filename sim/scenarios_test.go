package sim

import (
	"slices"
	"testing"
)

// Scenarios lists each scenario Config takes, in the command's order.
func TestScenariosAreTheConfigs(t *testing.T) {
	for _, sc := range Scenarios() {
		if err := (Config{Scenario: sc}).Defaults().Validate(); err != nil {
			t.Errorf("scenario %q: %v", sc, err)
		}
	}
	if got := Scenarios(); !slices.Equal(got, []string{"steady", "drop", "join"}) {
		t.Errorf("Scenarios() = %v", got)
	}
}
