package bench

import "testing"

// plainChanPeer is the plain buffered-channel semaphore of issue 2's
// reference figure: send to acquire, receive to release, no select.
var plainChanPeer = struct {
	name string
	make func(b *testing.B) func() bool
}{"chanplain", func(*testing.B) func() bool {
	sem := make(chan struct{}, concurrencySlots)
	return func() bool {
		sem <- struct{}{}
		<-sem
		return true
	}
}}

// BenchmarkSemaphore is BenchmarkConcurrency with the plain channel
// semaphore beside the select/default one, all in the same run:
//
//	cd bench && go test -run '^$' -bench Semaphore -count 6 -cpu 1,2,8 | benchstat -col /lib -
func BenchmarkSemaphore(b *testing.B) {
	peers := append(concurrencyPeers[:1:1], plainChanPeer)
	peers = append(peers, concurrencyPeers[1:]...)
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
