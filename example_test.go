package headroom_test

import (
	"errors"
	"fmt"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
)

func ExampleConfigError() {
	_, err := limit.PerWindow(0, 0)
	fmt.Println(errors.Is(err, headroom.ErrConfig))
	var problem *headroom.ConfigError
	if errors.As(err, &problem) {
		fmt.Println(problem.Field, "wants", problem.Want)
	}
	// Output:
	// true
	// PerWindow.Permits wants 1 or more
}
