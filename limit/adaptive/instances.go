package adaptive

// An InstanceCounter says how many processes share one budget. Each process
// takes an equal share of the configured rates; when the count changes, the
// limiter rescales its current rate so that the rate it found for the whole
// budget is kept (Rate.SetInstances).
//
// The shell polls the counter at most once a second, outside its lock, so
// an implementation may do I/O (a registry, a Redis set of heartbeats) as
// long as it returns quickly. A result below 1 is ignored.
type InstanceCounter interface {
	Instances() int
}
