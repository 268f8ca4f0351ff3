// Package bench measures headroom side by side with peer libraries. It is a
// module of its own so that users of headroom never download the peers.
//
// Run: cd bench && go test -run '^$' -bench . -count 6 -cpu 1,2,8 | tee new.txt && benchstat new.txt
package bench
