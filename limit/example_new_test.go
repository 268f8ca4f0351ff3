package limit_test

import (
	"encoding/json"
	"fmt"

	"github.com/headroom-go/headroom/limit"
)

// Options read from a configuration file: exactly one shape, durations as
// strings. New builds the limiter, or lists every problem at once.
func ExampleNew() {
	var o limit.Options
	if err := json.Unmarshal([]byte(`{"name": "search", "perWindow": {"permits": 100, "window": "1m"}}`), &o); err != nil {
		fmt.Println(err)
		return
	}
	lim, err := limit.New(o)
	fmt.Println(lim.Name(), err)

	_, err = limit.New(limit.Options{PermitsPerSecond: 5, Concurrency: 10, QueueLimit: new(-1)})
	fmt.Println(err)
	// Output:
	// search <nil>
	// limit: Options = [PermitsPerSecond Concurrency]: want exactly one shape; the others would silently lose
	// limit: QueueLimit = -1: want 0 (refuse at once) or more
}

// Options from a configuration file, strictly: a misspelt field is an
// error rather than a default, and every problem is listed at once, each at
// its JSON path.
func ExampleParseOptions() {
	o, err := limit.ParseOptions([]byte(`{"name": "search", "perWindow": {"permits": 100, "window": "1m"}}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	lim, err := limit.New(o)
	fmt.Println(lim.Name(), err)

	_, err = limit.ParseOptions([]byte(`{"perWindow": {"permit": 100, "window": "1m"}, "queueLimit": -1}`))
	fmt.Println(err)
	// Output:
	// search <nil>
	// limit: perWindow.permit = an unknown field: want one of permits, segments, window
	// limit: perWindow.permits = 0: want 1 or more
	// limit: queueLimit = -1: want 0 (refuse at once) or more
}
