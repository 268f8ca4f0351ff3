package sim

import "slices"

// Scenarios lists the names Config.Scenario takes, in the order the
// command shows them: steady, drop, join, mixed.
func Scenarios() []string { return slices.Clone(scenarios) }

// HasBurst reports whether a server of kind (one of ServerKinds) has a
// bucket whose depth Server.Burst sets; Burst is 0 for the other kinds.
func HasBurst(kind string) bool { return takesBurst(kind) }
