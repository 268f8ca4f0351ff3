package quota

import "time"

// State is a snapshot of a key, for dashboards and tests.
type State struct {
	// Known says the key holds fresh published figures.
	Known        bool
	Remaining    int64 // the guard's count: published, less attempts since
	Limit        int64
	Reset        time.Time // zero when unknown
	BlockedUntil time.Time // zero when not blocked
	InFlight     int
	Updated      time.Time // the last response that touched the key
	// Window is the window of Limit: the published or documented one
	// (Quota.Window); else, for an API with no single window (Discord's
	// buckets), the longest time to a reset that a successful response of
	// this bucket has shown, since no reset is further away than the window;
	// 0 when nothing says.
	Window time.Duration
	// Probing says the held reset has passed and the guard lets one probe
	// through at a time until a response publishes the figures again.
	Probing bool
}

// PerMinute is Limit as units per minute: Limit over Window, or over
// window when nothing says what Window is (no published or documented
// window, no reset seen yet). It is 0 when the state is not Known or has no
// limit. It is what the adaptive rate engine's SetPublishedLimit takes, r
// an *adaptive.Rate on its own clock (since):
//
//	st, _ := g.State(key, now)
//	r.SetPublishedLimit(since, st.PerMinute(time.Minute), st.Window)
func (s State) PerMinute(window time.Duration) float64 {
	if !s.Known || s.Limit <= 0 {
		return 0
	}
	w := s.Window
	if w <= 0 {
		w = window
	}
	if w <= 0 {
		return 0
	}
	return float64(s.Limit) * float64(time.Minute) / float64(w)
}

func unixTime(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}
