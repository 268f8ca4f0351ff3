package bench

import "testing"

// plainChanPeer is the plain buffered-channel semaphore of the reference
// figure: send to acquire, receive to release, no select.
var plainChanPeer = peer{"chanplain", func(*testing.B) func() bool {
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
	comparePeers(b, peers)
}
