package bench

import (
	_ "github.com/failsafe-go/failsafe-go"
	_ "github.com/headroom-go/headroom/limit"
	_ "go.uber.org/ratelimit"
	_ "golang.org/x/time/rate"
)
