package sim

import "testing"

// BenchmarkDefaultComparison runs what `go run ./cmd/headroom-sim` runs:
// every default mode through the default scenario (target: at most 1 s).
func BenchmarkDefaultComparison(b *testing.B) {
	for b.Loop() {
		for _, m := range Modes() {
			if _, err := Run(Config{NoSeries: true}, m); err != nil {
				b.Fatal(err)
			}
		}
	}
}
