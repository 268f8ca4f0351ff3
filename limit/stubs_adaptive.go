package limit

// AdaptiveOptions configures the latency-adaptive concurrency limit.
type AdaptiveOptions struct{}

func (a *AdaptiveOptions) validate() []error { return nil }

func newAdaptive(o Options) Limiter { panic("unimplemented") }
