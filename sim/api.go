package sim

import (
	"net/http"
	"time"
)

// defaultWindow is the seeds' window: the model API's window unless
// Server.Window says otherwise.
const defaultWindow = 60 * time.Second

// quotaStep is one step of a quota schedule: from At on, the API's limiter
// takes Units units per window (Server.Window): at most Units in any window
// for the sliding log, per window for the fixed window and the counter, and
// Units per window as the refill rate of a bucket.
type quotaStep struct {
	At    time.Duration
	Units int
}

// response is what the model API answers to one request.
type response struct {
	// Status is 200 or 429.
	Status int
	// RetryAfter is the Retry-After of a 429: the seconds until the request
	// would be accepted, rounded up to whole seconds as an HTTP server
	// writes them (at least 1 s). 0 on a 200, and when the server publishes
	// nothing (publishNone).
	RetryAfter time.Duration
	// Header holds the published rate-limit headers, or nil when the API
	// publishes none (see modelAPI.publish and Server.Publish).
	Header http.Header
	// Delay is how long the server held an accepted request before it
	// answered (nginx's limit_req delay): the response leaves Delay after
	// the request arrived, and its headers are written then.
	Delay time.Duration
}

// modelAPI is the model API: a hidden quota of units per window, kept by
// one kind of server-side limiter (Server.Kind). The limiter counts a
// request when it arrives; a request it refuses gets 429 with a Retry-After
// of the seconds until it would be accepted, and takes nothing from the
// quota. Build it with newAPI.
type modelAPI struct {
	server   Server
	schedule []quotaStep // sorted by At; schedule[0].At == 0
	next     int         // the first step not yet handed to the limit
	quota    int         // the quota in force
	limit    serverLimit

	// publish makes the API build the headers its Server.Publish names;
	// without it only response.RetryAfter says anything (the modes that do
	// not read headers save the work).
	publish bool
	// publishAt is the share of the quota used from which publishDraft3
	// publishes its headers (SharePoint: 80%).
	publishAt float64
}

// newAPI builds the API of a valid server and a schedule whose first step is
// at 0.
func newAPI(s Server, schedule []quotaStep) *modelAPI {
	a := &modelAPI{server: s, schedule: schedule, publishAt: 0.8, quota: schedule[0].Units, next: 1}
	a.limit = newServerLimit(s, a.quota)
	return a
}

// quotaAt is the quota in force at now, units per window.
func (a *modelAPI) quotaAt(now time.Duration) int { return quotaAt(a.schedule, now) }

// quotaAt is the quota that schedule puts in force at t.
func quotaAt(schedule []quotaStep, t time.Duration) int {
	q := schedule[0].Units
	for _, s := range schedule[1:] {
		if s.At > t {
			break
		}
		q = s.Units
	}
	return q
}

// advance hands the limit every step of the schedule whose time has come
// by now, at its own time, so that a bucket refills at the old rate until
// the step.
func (a *modelAPI) advance(now time.Duration) {
	for a.next < len(a.schedule) && a.schedule[a.next].At <= now {
		st := a.schedule[a.next]
		a.limit.setQuota(st.At, st.Units)
		a.quota = st.Units
		a.next++
	}
}

// used is what the limiter counts against the quota at now, in units: the
// units in the window (sliding log), in the current window (fixed), the
// weighted count (sliding counter), or what the bucket holds beyond what
// has leaked or refilled (token and leaky buckets).
func (a *modelAPI) used(now time.Duration) int {
	a.advance(now)
	return a.limit.used(now)
}

// handle serves a request of units arriving at now: the limiter accepts it
// (possibly holding it: response.Delay) or refuses it with 429, and the
// API publishes what its Server.Publish names.
func (a *modelAPI) handle(now time.Duration, units int) response {
	a.advance(now)
	d := a.limit.decide(now, units)
	var r response
	if d.ok {
		r.Status = http.StatusOK
		r.Delay = d.delay
	} else {
		r.Status = http.StatusTooManyRequests
		if sendsRetryAfter(a.server.Publish) {
			wait := a.server.Window // a request larger than the quota: never; say a window
			if !d.never {
				wait = d.fitsAt - now
			}
			r.RetryAfter = wholeSeconds(wait)
		}
	}
	if a.publish {
		r.Header = a.headers(now+r.Delay, a.quota, &d, r.RetryAfter)
	}
	return r
}
