package telemetry

// Fleet instruments: the Redis calls of package fleet. Each carries
// AttrLimiter (the limiter's, counter's or quota view's name) and
// AttrFleetOperation.
const (
	// FleetRedisDurationName is the histogram of how long each call to
	// Redis took, answered or not, in seconds (unit "s").
	FleetRedisDurationName = "headroom.fleet.redis.duration"

	// FleetRedisErrorsName counts calls to Redis that failed — no answer
	// within the timeout, a refused connection, an error reply — unit
	// "{error}". A call abandoned because its caller's context ended is not
	// counted.
	FleetRedisErrorsName = "headroom.fleet.redis.errors"

	// FleetFallbacksName counts requests decided without Redis by the
	// failure policy, unit "{request}", with AttrFleetPolicy.
	FleetFallbacksName = "headroom.fleet.fallbacks"

	// FleetInstancesName is the gauge of the processes an instance counter
	// last counted, unit "{instance}".
	FleetInstancesName = "headroom.fleet.instances"
)

// Fleet attribute keys.
const (
	// AttrFleetOperation is what a call to Redis did: "token_bucket",
	// "sliding_window", "heartbeat", "quota_publish", "quota_reserve" or
	// "quota_read".
	AttrFleetOperation = "headroom.fleet.operation"

	// AttrFleetPolicy is the failure policy that decided a request:
	// "fail_open" or "fail_closed".
	AttrFleetPolicy = "headroom.fleet.policy"
)
