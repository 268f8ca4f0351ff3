package backoffcurve

import (
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/headroom-go/headroom"
)

// ceiling bounds the curve's cap: a wait drawn with jitter from a cap near
// math.MaxInt64 would overflow a time.Duration. Every caller caps its waits
// far below it anyway.
const ceiling = 24 * time.Hour

// Reset makes e the curve b describes, at its first wait. b has its defaults
// filled in (headroom.Backoff.WithDefaults) and is valid.
//
// The curve never stops (MaxElapsedTime 0: past Max it stays at Max), so its
// clock, which only measures the elapsed time, is one that stands still:
// the curve reads no clock.
func Reset(e *backoff.ExponentialBackOff, b headroom.Backoff) {
	jitter := 0.0
	if b.Jitter != nil {
		jitter = *b.Jitter
	}
	capped := min(time.Duration(b.Max), ceiling)
	*e = backoff.ExponentialBackOff{
		InitialInterval:     min(time.Duration(b.Initial), capped),
		RandomizationFactor: jitter,
		Multiplier:          b.Multiplier,
		MaxInterval:         capped,
		MaxElapsedTime:      0,
		Stop:                backoff.Stop,
		Clock:               stoppedClock{},
	}
	e.Reset()
}

// stoppedClock is the curve's clock: it only feeds MaxElapsedTime, which is
// off.
type stoppedClock struct{}

func (stoppedClock) Now() time.Time { return time.Time{} }

// Problems returns b's problems (headroom.Backoff.Validate) as the package
// pkg reports them for its setting field: "quota: Backoff.Jitter = 2: …".
func Problems(pkg, field string, b headroom.Backoff) []error {
	problems, _ := b.Validate().(interface{ Unwrap() []error })
	if problems == nil {
		return nil
	}
	list := problems.Unwrap()
	for _, e := range list {
		if ce, ok := e.(*headroom.ConfigError); ok {
			ce.Package, ce.Field = pkg, field+"."+ce.Field
		}
	}
	return list
}
