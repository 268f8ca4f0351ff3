package httpx

import (
	"go.opentelemetry.io/otel/attribute"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// adaptiveRateLayer builds WithAdaptiveRate's layer: the limiter layer with
// an adaptive rate limiter per host (or one shared), the request path of the AWS SDKs' adaptive retry mode.
// The cost estimator and the throttle classifier are the layer's
// (LimiterOption WithCost and WithThrottleClassifier); the outcome goes back on the
// lease — Throttle with the server's Retry-After, Ignore for a 5xx that is
// not a throttle and for a network error, Success otherwise.
func adaptiveRateLayer(o adaptive.RateConfig, c *limiterConfig, b *builder) (*hostSet, error) {
	check := limit.Options{AdaptiveRate: &o}
	if err := check.Validate(); err != nil {
		return nil, err
	}
	return newHostSet(c, func(host string) *hostEntry {
		opts := []limit.Option{limit.WithMeterProvider(b.mp)}
		if host != "" {
			opts = append(opts, limit.WithName(host), limit.WithAttributes(attribute.String(telemetry.AttrHost, host),
				attribute.String(telemetry.AttrLayer, metrics.LayerAdaptiveRate)))
		}
		lim, err := limit.AdaptiveRate(o, opts...)
		return limiterEntry(host, lim, err, false, true)
	}), nil
}
