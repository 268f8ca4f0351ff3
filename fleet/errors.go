package fleet

import (
	"errors"
	"strings"
)

// ErrUnavailable is what an *UnavailableError matches.
var ErrUnavailable = errors.New("redis unavailable")

// UnavailableError is a shared limiter's answer, failing closed, while Redis
// cannot be reached: no permit was granted, and none was refused either —
// it is not a throttle (errors.Is(err, limit.ErrRateLimited) is false), so
// a retry runner treats it as the transient failure it is.
type UnavailableError struct {
	// Limiter is the limiter's name.
	Limiter string
	// Err is why: the last call's error, or errCircuitOpen while the
	// circuit keeps calls from Redis.
	Err error
}

func (e *UnavailableError) Error() string {
	var b strings.Builder
	b.WriteString("fleet: ")
	b.WriteString(e.Limiter)
	b.WriteString(": redis unreachable, failing closed")
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Is makes errors.Is(err, ErrUnavailable) hold.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Unwrap is Err.
func (e *UnavailableError) Unwrap() error { return e.Err }

// errCircuitOpen is the Err of a refusal decided while the circuit is open.
var errCircuitOpen = errors.New("circuit open after repeated redis failures")
