package resilience

import (
	"github.com/headroom-go/headroom/internal/metrics"
)

func telemetryVerdict(k Kind) string    { return metrics.RunnerVerdicts[k] }
func telemetryStop(r StopReason) string { return metrics.RunnerStops[r] }

const (
	telemetryClosed   = metrics.BreakerClosed
	telemetryHalfOpen = metrics.BreakerHalfOpen
	telemetryOpen     = metrics.BreakerOpen
)
