package sim

import "slices"

// Scenarios lists the names Config.Scenario takes, in the order the
// command shows them: steady, drop, join.
func Scenarios() []string { return slices.Clone(scenarios) }
