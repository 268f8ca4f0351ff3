package sim

import (
	"net/http"
	"time"
)

// Window is the seeds' window: the model API's window unless
// Server.Window says otherwise.
const Window = 60 * time.Second

// QuotaStep is one step of a quota schedule: from At on, the API's limiter
// takes Units units per window (Server.Window): at most Units in any window
// for the sliding log, per window for the fixed window and the counter, and
// Units per window as the refill rate of a bucket.
type QuotaStep struct {
	At    time.Duration
	Units int
}

// A Response is what the model API answers to one request.
type Response struct {
	// Status is 200 or 429.
	Status int
	// RetryAfter is the Retry-After of a 429: the seconds until the request
	// would be accepted, rounded up to whole seconds as an HTTP server
	// writes them (at least 1 s). 0 on a 200, and when the server publishes
	// nothing (PublishNone).
	RetryAfter time.Duration
	// Header holds the published rate-limit headers, or nil when the API
	// publishes none (see API.Publish and Server.Publish).
	Header http.Header
	// Delay is how long the server held an accepted request before it
	// answered (nginx's limit_req delay): the response leaves Delay after
	// the request arrived, and its headers are written then.
	Delay time.Duration
}

// API is the model API: a hidden quota of units per window, kept by one
// kind of server-side limiter (Server.Kind). The limiter counts a request
// when it arrives; a request it refuses gets 429 with a Retry-After of the
// seconds until it would be accepted, and takes nothing from the quota.
// The zero API has no quota; use NewAPI or NewServerAPI.
type API struct {
	server   Server
	schedule []QuotaStep // sorted by At; schedule[0].At == 0
	next     int         // the first step not yet handed to the limit
	quota    int         // the quota in force
	limit    serverLimit

	// Publish makes the API build the headers its Server.Publish names;
	// without it only Response.RetryAfter says anything (the modes that do
	// not read headers save the work).
	Publish bool
	// PublishAt is the share of the quota used from which PublishDraft3
	// publishes its headers (SharePoint: 80%).
	PublishAt float64
}

// NewAPI returns the seeds' model API — an exact sliding window of 60 s
// that publishes draft-03 headers from 80% of the quota, when Publish is
// set — with a quota schedule. The first step's time is taken as 0.
func NewAPI(schedule []QuotaStep) *API {
	s := append([]QuotaStep(nil), schedule...)
	if len(s) == 0 {
		s = []QuotaStep{{Units: 0}}
	}
	s[0].At = 0
	return newAPI(Server{}.Defaults(), s)
}

// newAPI builds the API of a valid server and a schedule whose first step is
// at 0.
func newAPI(s Server, schedule []QuotaStep) *API {
	a := &API{server: s, schedule: schedule, PublishAt: 0.8, quota: schedule[0].Units, next: 1}
	a.limit = newServerLimit(s, a.quota)
	return a
}

// Quota is the quota in force at now, units per window.
func (a *API) Quota(now time.Duration) int {
	q := a.schedule[0].Units
	for _, s := range a.schedule[1:] {
		if s.At > now {
			break
		}
		q = s.Units
	}
	return q
}

// advance hands the limit every step of the schedule whose time has come
// by now, at its own time, so that a bucket refills at the old rate until
// the step.
func (a *API) advance(now time.Duration) {
	for a.next < len(a.schedule) && a.schedule[a.next].At <= now {
		st := a.schedule[a.next]
		a.limit.setQuota(st.At, st.Units)
		a.quota = st.Units
		a.next++
	}
}

// Used is what the limiter counts against the quota at now, in units: the
// units in the window (sliding log), in the current window (fixed), the
// weighted count (sliding counter), or what the bucket holds beyond what
// has leaked or refilled (token and leaky buckets).
func (a *API) Used(now time.Duration) int {
	a.advance(now)
	return a.limit.used(now)
}

// Handle serves a request of units arriving at now: the limiter accepts it
// (possibly holding it: Response.Delay) or refuses it with 429, and the
// API publishes what its Server.Publish names.
func (a *API) Handle(now time.Duration, units int) Response {
	a.advance(now)
	d := a.limit.decide(now, units)
	var r Response
	if d.ok {
		r.Status = http.StatusOK
		r.Delay = d.delay
	} else {
		r.Status = http.StatusTooManyRequests
		if a.server.Publish != PublishNone {
			wait := a.server.Window // a request larger than the quota: never; say a window
			if !d.never {
				wait = d.fitsAt - now
			}
			r.RetryAfter = wholeSeconds(wait)
		}
	}
	if a.Publish {
		r.Header = a.headers(now+r.Delay, a.quota, &d, r.RetryAfter)
	}
	return r
}
