package backoffcurve

import (
	"math"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/problems"
)

// ceiling bounds the curve's cap: a wait drawn with jitter from a cap near
// math.MaxInt64 would overflow a time.Duration. Every caller caps its waits
// far below it anyway.
const ceiling = 24 * time.Hour

// Reset makes e the curve b describes, at its first wait. b has its defaults
// filled in (WithDefaults) and is valid (Check).
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

// WithDefaults returns b with each zero field (nil Jitter) taken from d.
// A Max taken from d is raised to Initial when Initial is above it, so that
// a long first wait given alone is not refused for a default cap.
func WithDefaults(b, d headroom.Backoff) headroom.Backoff {
	if b.Initial == 0 {
		b.Initial = d.Initial
	}
	if b.Multiplier == 0 {
		b.Multiplier = d.Multiplier
	}
	if b.Jitter == nil {
		b.Jitter = d.Jitter
	}
	if b.Max == 0 {
		b.Max = max(d.Max, b.Initial)
	}
	return b
}

// Check records b's problems on l, the List of the setting that holds it.
// A zero field is no problem: it takes the setting's default.
func Check(b headroom.Backoff, l *problems.List) {
	if b.Initial < 0 {
		l.Add("Initial", b.Initial, `0 (the default) or a duration above 0, such as "1s"`)
	}
	if m := b.Multiplier; m != 0 && !(m >= 1 && !math.IsInf(m, 1)) { // refuses NaN
		l.Add("Multiplier", m, "0 (the default) or a finite factor of 1 or more")
	}
	if j := b.Jitter; j != nil && !(*j >= 0 && *j <= 1) {
		l.Add("Jitter", *j, "a fraction in [0, 1]")
	}
	switch {
	case b.Max < 0:
		l.Add("Max", b.Max, `0 (the default) or a duration above 0, such as "1m"`)
	case b.Max > 0 && b.Max < b.Initial:
		l.Add("Max", b.Max, "at least Initial ("+b.Initial.String()+")")
	}
}
