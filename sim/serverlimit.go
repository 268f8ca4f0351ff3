package sim

import "time"

// serverLimit is one kind of server-side limiter, as the API uses it: the
// API hands it each step of the quota schedule as its time comes and asks it
// about each request when the request arrives. Times never go back.
type serverLimit interface {
	// setQuota makes the quota units per window from at on.
	setQuota(at time.Duration, units int)
	// decide accepts (and counts) or refuses a request of units arriving at
	// now.
	decide(now time.Duration, units int) decision
	// used is what the limiter counts against the quota at now, in units:
	// the window's count, or what the bucket holds beyond what has leaked.
	used(now time.Duration) int
}

// decision is a kind's answer to one request and its state after it, which
// the API publishes (publish.go) as that kind of server computes it.
type decision struct {
	ok bool
	// remaining is the units the limiter would still accept at once, after
	// this request; never below 0.
	remaining int
	// resetAt is the instant this kind's reset names: the end of a fixed
	// or counted window, when the oldest unit leaves a sliding log, when a
	// bucket is full again (or has one unit back: Server.UnitReset).
	resetAt time.Duration
	// fitsAt is, for a refused request, the first instant it would be
	// accepted if nothing else arrived; never says it never would be (more
	// units than the limiter can ever take).
	fitsAt time.Duration
	never  bool
	// delay is how long the server holds an accepted request before it
	// answers (nginx's limit_req delay).
	delay time.Duration
}

func newServerLimit(s Server, q int) serverLimit {
	switch s.Kind {
	case kindFixedWindow:
		return newFixedWindow(s, q)
	case kindSlidingCounter:
		return newSlidingCounter(s, q)
	case kindTokenBucket:
		return newTokenBucket(s, q)
	case kindLeakyBucket:
		return newLeakyBucket(s, q)
	}
	return newSlidingLog(s, q)
}
