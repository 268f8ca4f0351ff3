package sim

import (
	"net/http"
	"strconv"
	"time"
)

// Window is the length of the model API's sliding window.
const Window = 60 * time.Second

// QuotaStep is one step of a quota schedule: from At on, the API accepts at
// most Units units in any sliding window of 60 s.
type QuotaStep struct {
	At    time.Duration
	Units int
}

// A Response is what the model API answers to one request.
type Response struct {
	// Status is 200 or 429.
	Status int
	// RetryAfter is the Retry-After of a 429: the seconds until the window
	// has room for the request, rounded up to whole seconds as an HTTP
	// server writes them. 0 on a 200.
	RetryAfter time.Duration
	// Header holds the published rate-limit headers, or nil when the API
	// publishes none (see API.Publish).
	Header http.Header
}

type entry struct {
	at    time.Duration
	units int
}

// API is the model API: a hidden quota of units in an exact sliding window
// of 60 s. It keeps every accepted request with its time; a request whose
// units would take the window over the quota gets 429 with a Retry-After of
// the seconds until there is room. Refused requests take nothing from the
// quota. The zero API has no quota; use NewAPI.
type API struct {
	schedule []QuotaStep // sorted by At; schedule[0].At == 0
	entries  []entry     // accepted, oldest first, from head on
	head     int
	used     int

	// Publish makes the API send RateLimit-Limit, RateLimit-Remaining and
	// RateLimit-Reset (draft-03, as SharePoint Online sends them) once the
	// units in the window reach PublishAt of the quota (SharePoint: 80%).
	Publish   bool
	PublishAt float64
}

// NewAPI returns a model API with a quota schedule. The first step's time is
// taken as 0.
func NewAPI(schedule []QuotaStep) *API {
	s := append([]QuotaStep(nil), schedule...)
	if len(s) == 0 {
		s = []QuotaStep{{Units: 0}}
	}
	s[0].At = 0
	return &API{schedule: s, PublishAt: 0.8}
}

// Quota is the quota in force at now.
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

// expire drops the entries that left the window by now: an entry accepted at
// t counts in the window (now-60s, now], so it leaves at t+60s.
func (a *API) expire(now time.Duration) {
	for a.head < len(a.entries) && a.entries[a.head].at+Window <= now {
		a.used -= a.entries[a.head].units
		a.head++
	}
	if a.head > 4096 && a.head*2 > len(a.entries) {
		n := copy(a.entries, a.entries[a.head:])
		a.entries = a.entries[:n]
		a.head = 0
	}
}

// Used is the number of units in the window at now.
func (a *API) Used(now time.Duration) int {
	a.expire(now)
	return a.used
}

// roomIn is how long after now the window has room for units more, under
// quota q, counting only the expiry of what it holds. ok is false when it
// never has room (units > q).
func (a *API) roomIn(now time.Duration, units, q int) (time.Duration, bool) {
	if units > q {
		return 0, false
	}
	over := a.used + units - q
	if over <= 0 {
		return 0, true
	}
	for _, e := range a.entries[a.head:] {
		over -= e.units
		if over <= 0 {
			return e.at + Window - now, true
		}
	}
	return 0, false // unreachable: used counts the entries
}

// wholeSeconds rounds d up to whole seconds, at least 1 s.
func wholeSeconds(d time.Duration) time.Duration {
	s := (d + time.Second - 1) / time.Second
	return max(s, 1) * time.Second
}

// Handle serves a request of units at now: it accepts it when the window has
// room under the quota in force, and otherwise answers 429 with Retry-After.
func (a *API) Handle(now time.Duration, units int) Response {
	a.expire(now)
	q := a.Quota(now)
	var r Response
	if a.used+units <= q {
		a.entries = append(a.entries, entry{now, units})
		a.used += units
		r.Status = http.StatusOK
	} else {
		r.Status = http.StatusTooManyRequests
		d, ok := a.roomIn(now, units, q)
		if !ok {
			d = Window // a request larger than the quota: never; say a window
		}
		r.RetryAfter = wholeSeconds(d)
	}
	if a.Publish {
		if float64(a.used) >= a.PublishAt*float64(q) {
			r.Header = a.headers(now, q, r.RetryAfter)
		} else if r.RetryAfter > 0 {
			r.Header = make(http.Header, 1)
		}
		if r.RetryAfter > 0 {
			r.Header.Set("Retry-After", strconv.Itoa(int(r.RetryAfter/time.Second)))
		}
	}
	return r
}

// headers writes the draft-03 trio. Remaining is what the window has left
// under the quota; Reset is the whole seconds until units start to leave the
// window (the oldest accepted unit: when the remaining allowance next
// grows), or, on a 429, the Retry-After, as SharePoint makes them match.
func (a *API) headers(now time.Duration, q int, retryAfter time.Duration) http.Header {
	remaining := max(q-a.used, 0)
	reset := retryAfter
	if reset == 0 {
		reset = time.Second
		if a.head < len(a.entries) {
			reset = wholeSeconds(a.entries[a.head].at + Window - now)
		}
	}
	h := make(http.Header, 3)
	h.Set("RateLimit-Limit", strconv.Itoa(q))
	h.Set("RateLimit-Remaining", strconv.Itoa(remaining))
	h.Set("RateLimit-Reset", strconv.Itoa(int(reset/time.Second)))
	return h
}
