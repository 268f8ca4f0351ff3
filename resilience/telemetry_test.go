package resilience

import "github.com/headroom-go/headroom/telemetry"

func telemetryVerdict(k Kind) string    { return telemetry.RunnerVerdicts[k] }
func telemetryStop(r StopReason) string { return telemetry.RunnerStops[r] }

const (
	telemetryClosed   = telemetry.BreakerClosed
	telemetryHalfOpen = telemetry.BreakerHalfOpen
	telemetryOpen     = telemetry.BreakerOpen
)
