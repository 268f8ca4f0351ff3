package limit

// AdaptiveRateOptions configures the throttle-driven adaptive rate limiter.
type AdaptiveRateOptions struct{}

func (a *AdaptiveRateOptions) validate() []error { return nil }

func newAdaptiveRate(o Options) Limiter { panic("unimplemented") }
