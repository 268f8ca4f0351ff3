package limit

// Placeholders until the sliding window and the bulkhead land.
const maxSegments = 1024

func newPerWindow(o Options) Limiter   { panic("unimplemented") }
func newConcurrency(o Options) Limiter { panic("unimplemented") }
