package limit_test

import (
	"context"
	"fmt"

	"github.com/headroom-go/headroom/limit"
)

// A request's priority travels in its context. A limiter reads it only
// when the request has to wait: its queue then serves critical work
// first, background work last, and each level in the order it came.
func ExampleWithPriority() {
	lim, err := limit.PerSecond(10, 1, limit.WithQueueLimit(100))
	if err != nil {
		panic(err)
	}
	ctx := limit.WithPriority(context.Background(), limit.Critical)
	lease, err := lim.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	defer lease.Release()
	fmt.Println(limit.PriorityFrom(ctx), limit.PriorityFrom(context.Background()))
	// Output:
	// critical default
}

// Configuration names the levels as String writes them.
func ExampleParsePriority() {
	p, err := limit.ParsePriority("background")
	fmt.Println(p, err)
	_, err = limit.ParsePriority("urgent")
	fmt.Println(err)
	// Output:
	// background <nil>
	// limit: priority "urgent" is not a level; use critical, default or background
}
