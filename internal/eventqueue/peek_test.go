package eventqueue

import (
	"math/rand/v2"
	"testing"
)

// Peek shows what Pop then takes, and takes nothing itself.
func TestPeekIsTheNextPop(t *testing.T) {
	var q Queue[tied]
	if e, ok := q.Peek(); ok || e != (tied{}) {
		t.Fatalf("Peek on an empty queue = %v, %v; want the zero event, false", e, ok)
	}
	rng := rand.New(rand.NewPCG(7, 1))
	for id := range 500 {
		q.Push(tied{at: rng.IntN(8), id: id})
	}
	for q.Len() > 0 {
		n := q.Len()
		peeked, ok := q.Peek()
		if !ok || q.Len() != n {
			t.Fatalf("Peek = %v, %v with %d events, leaving %d", peeked, ok, n, q.Len())
		}
		if popped, _ := q.Pop(); popped != peeked {
			t.Fatalf("Peek showed %v, Pop took %v", peeked, popped)
		}
	}
}
