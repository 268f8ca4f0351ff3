package adaptive

import "strconv"

// Outcome is what a call taught the engine that admitted it, reported when
// it ends: to Concurrency.Release with its latency, to Rate.Release with
// its send time and the server's Retry-After. The zero value is Success.
type Outcome uint8

const (
	// Success: the call reached the dependency and was not throttled.
	// Concurrency samples its latency; Rate may raise the rate.
	Success Outcome = iota
	// Throttled: the dependency said "too many" (a 429, or a 503 with a
	// Retry-After). Rate cuts, and pauses on the Retry-After; Concurrency
	// reads it as queueing.
	Throttled
	// Dropped: the call timed out or was shed downstream. Concurrency reads
	// it as queueing; Rate learns nothing from it.
	Dropped
	// Ignored: the call says nothing about the dependency's capacity (a
	// network error, a 500). Neither engine learns from it.
	Ignored
)

var outcomeNames = [...]string{"success", "throttled", "dropped", "ignored"}

func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return "outcome(" + strconv.Itoa(int(o)) + ")"
}
