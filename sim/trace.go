package sim

import "time"

// traceKind names a call the simulator made on an engine core.
type traceKind uint8

// The calls.
const (
	traceAcquire   traceKind = iota // Acquire that admitted
	traceEnqueue                    // Acquire that did not, then Enqueue
	traceDequeue                    // a Dequeue that returned a waiter
	traceSuccess                    // Release of a success
	traceThrottled                  // Release of a throttle
	traceInstances                  // SetInstances
	tracePublished                  // SetPublishedLimit that changed the cap
	traceQueueFull                  // Acquire that did not, with no room to Enqueue
)

// traceEvent is one call the simulator made on an instance's engine core,
// with the core's rate after it (Config.trace): the record that lets a test
// replay the same calls on a fresh core and compare, which proves that the
// simulator holds no model of its own.
type traceEvent struct {
	Instance   int
	At         time.Duration
	Kind       traceKind
	N          int // cost, or the instance count for traceInstances
	Sent       time.Duration
	RetryAfter time.Duration
	Limit      float64       // the published limit of tracePublished, units a minute
	Window     time.Duration // the window of that limit
	Rate       float64       // the core's rate after the call, units a minute
}
