package concurrency_test

import (
	"fmt"

	"github.com/headroom-go/headroom/limit/concurrency"
)

// At most two permits held at once; a permit given back makes room for the
// next, once.
func ExampleNew() {
	b, err := concurrency.New(2)
	if err != nil {
		fmt.Println(err)
		return
	}
	first, _ := b.Take(0)
	_, ok2 := b.Take(0)
	_, ok3 := b.Take(0)
	fmt.Println(ok2, ok3)
	fmt.Println(b.Give(first), b.Give(first)) // a ticket frees its permit once
	_, ok4 := b.Take(0)
	fmt.Println(ok4, b.InFlight())
	// Output:
	// true false
	// true false
	// true 2
}
