package bench

import "testing"

// A peer is one library's way of doing the thing a benchmark compares: make
// returns a func that does it once and reports whether it was admitted.
type peer struct {
	name string
	make func(b *testing.B) func() bool
}

// comparePeers runs every peer serially and then from RunParallel's
// goroutines (GOMAXPROCS of them, set by -cpu), as sub-benchmarks named
// mode=serial|parallel/lib=NAME, for benchstat -col /lib.
func comparePeers(b *testing.B, peers []peer) {
	for _, mode := range []string{"serial", "parallel"} {
		for _, p := range peers {
			b.Run("mode="+mode+"/lib="+p.name, func(b *testing.B) {
				admit := p.make(b)
				b.ReportAllocs()
				if mode == "serial" {
					for b.Loop() {
						if !admit() {
							b.Fatal("refused")
						}
					}
					return
				}
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if !admit() {
							b.Error("refused")
							return
						}
					}
				})
			})
		}
	}
}
