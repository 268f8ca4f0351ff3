package quota

import (
	"context"
	"errors"
	"time"
	"weak"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// keyStates reads the guard's keys for its gauges, through a weak pointer
// so that the meter provider does not keep the guard alive.
func keyStates(wp weak.Pointer[Guard]) func(report func(metrics.KeyState)) {
	return func(report func(metrics.KeyState)) {
		g := wp.Value()
		if g == nil {
			return
		}
		now := time.Now()
		g.keys.each(func(key string, _ *entry) bool {
			st, ok := g.State(key, now)
			if !ok {
				return true
			}
			ks := metrics.KeyState{Key: key, Known: st.Known, Limit: st.Limit, Remaining: st.Remaining}
			if !st.Reset.IsZero() {
				ks.Reset = st.Reset.Sub(now)
			}
			if !st.BlockedUntil.IsZero() {
				ks.Blocked = st.BlockedUntil.Sub(now)
			}
			report(ks)
			return true
		})
	}
}

// refused counts a refusal of Acquire's, err, for key with its cause: no
// in-flight slot when the slot was not taken, else what holds the key. A
// cancellation is not a refusal.
func (g *Guard) refused(ctx context.Context, key string, slotted bool, err error) {
	var rl *limit.RateLimitedError
	if g.tel == nil || !errors.As(err, &rl) {
		return
	}
	reason := telemetry.ReasonInFlight
	if slotted {
		reason = g.cause(key, time.Now())
	}
	g.tel.Refused(ctx, key, reason)
}

// cause is what holds key at now: a block (Retry-After, backoff), a probe
// past a reset, or the reserve.
func (g *Guard) cause(key string, now time.Time) string {
	e := g.lookup(key)
	if e == nil {
		return telemetry.ReasonReserve
	}
	n := now.UnixNano()
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.blocked > n:
		return telemetry.ReasonBlocked
	case e.probing || !e.contacted:
		return telemetry.ReasonProbe
	}
	return telemetry.ReasonReserve
}
