package concurrency_test

import (
	"fmt"

	"github.com/headroom-go/headroom/limit/concurrency"
)

// At most two permits held at once; a release makes room for the next.
func ExampleNew() {
	b, err := concurrency.New(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	take := func() bool { ok, _ := b.TryAcquire(0, 1); return ok }
	fmt.Println(take(), take(), take())
	b.Release(1)
	fmt.Println(take(), b.InFlight())
	// Output:
	// true true false
	// true 2
}
