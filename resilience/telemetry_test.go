package resilience

import (
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/telemetry"
)

func telemetryVerdict(k Kind) string    { return metrics.RunnerVerdicts[k] }
func telemetryStop(r StopReason) string { return metrics.RunnerStops[r] }

const (
	telemetryClosed   = telemetry.BreakerClosed
	telemetryHalfOpen = telemetry.BreakerHalfOpen
	telemetryOpen     = telemetry.BreakerOpen
)
