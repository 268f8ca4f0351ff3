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
	// AttrFleetOperation is what a call to Redis did: one of the
	// FleetOp values.
	AttrFleetOperation = "headroom.fleet.operation"

	// AttrFleetPolicy is the failure policy that decided a request:
	// FleetFailOpen or FleetFailClosed.
	AttrFleetPolicy = "headroom.fleet.policy"
)

// Values of AttrFleetOperation.
const (
	FleetOpTokenBucket   = "token_bucket"
	FleetOpSlidingWindow = "sliding_window"
	FleetOpHeartbeat     = "heartbeat"
	FleetOpQuotaPublish  = "quota_publish"
	FleetOpQuotaReserve  = "quota_reserve"
	FleetOpQuotaRead     = "quota_read"
)

// Values of AttrFleetPolicy.
const (
	FleetFailOpen   = "fail_open"
	FleetFailClosed = "fail_closed"
)
