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
	fmt.Println(b.TryAcquire(1), b.TryAcquire(1), b.TryAcquire(1))
	b.Release(1)
	fmt.Println(b.TryAcquire(1), b.InFlight())
	// Output:
	// true true false
	// true 2
}
