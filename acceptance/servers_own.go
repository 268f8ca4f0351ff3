package acceptance

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// The servers in this file are ours, for what no real server does: a
// sliding-window log that counts CostHeader's units, and the same log with
// a quota that halves, an outage, or connection resets. Each guards
// okHandler with one quota for every request.

// OwnSlidingLog is a sliding-window log (see slidingLog) of l.Units units
// in any l.Window, counting each request's CostHeader.
//
// h picks the headers:
//   - PublishDraft6, on every response: RateLimit-Limit (the capacity),
//     RateLimit-Remaining (the units that would fit after this request),
//     RateLimit-Reset (seconds until the oldest units in the window leave,
//     the soonest any come back, rounded up; the window when it holds
//     none), RateLimit-Policy "<capacity>;w=<window in seconds>"; and
//     Retry-After on a 429.
//   - PublishDraft3: the same RateLimit-Limit, -Remaining and -Reset on
//     every response, with no RateLimit-Policy: nothing says the window
//     (draft-ietf-httpapi-ratelimit-headers-03's fields, as SharePoint
//     sends them, but on every response); and Retry-After on a 429.
//   - PublishRetryAfter: Retry-After on a 429 only.
//   - PublishNone: nothing.
//
// Retry-After is the time until this request's units would fit, in whole
// seconds rounded up (at least 1). A request costing more than the
// capacity can never fit: it is refused with Retry-After the window.
//
// Allowance: the greedy client's units (see logSchedule.greedyUnits):
// Units at 0 and again each Window, Units × ⌈d / Window⌉.
func OwnSlidingLog(l Limit, h Headers) ServerSpec {
	return logSpec("sliding log", l, h, logSchedule{units: l.Units, window: l.Window}, nil)
}

// HalvingLog is OwnSlidingLog whose capacity halves (rounded down) at
// halveAt after its first request; its headers then publish the new
// capacity. Units already in the window stay, so it refuses everything
// until enough of them leave.
func HalvingLog(l Limit, h Headers, halveAt time.Duration) ServerSpec {
	return logSpec("sliding log, quota halves", l, h, logSchedule{units: l.Units, window: l.Window, halveAt: halveAt}, nil)
}

// OutageLog is OwnSlidingLog that, from downAt after its first request and
// for downFor, answers every request 503 without Retry-After or any other
// header, and without counting it. Its own refusals are 429s, so every 503
// is the outage's.
func OutageLog(l Limit, h Headers, downAt, downFor time.Duration) ServerSpec {
	return logSpec("sliding log, 503 outage", l, h,
		logSchedule{units: l.Units, window: l.Window, downFrom: downAt, downTo: downAt + downFor}, nil)
}

// ResettingLog is OwnSlidingLog behind a connection resetter (see
// connectionResetter): a fraction of new connections are reset at their
// first request, before the limiter sees it, and every connection closes
// after connectionRequests responses. Resets cost no units, so the
// allowance is the log's.
func ResettingLog(l Limit, h Headers, fraction float64, seed uint64) ServerSpec {
	return logSpec("sliding log, connection resets", l, h, logSchedule{units: l.Units, window: l.Window},
		func(next http.Handler) (http.Handler, func(*http.Server), error) {
			r, err := newConnectionResetter(next, fraction, connectionRequests, seed)
			if err != nil {
				return nil, nil, err
			}
			return r, r.configure, nil
		})
}

// logSpec is the spec of a log server; wrap, if not nil, puts a handler in
// front of it and may configure the http.Server.
func logSpec(name string, l Limit, h Headers, sched logSchedule,
	wrap func(http.Handler) (http.Handler, func(*http.Server), error)) ServerSpec {
	return ServerSpec{
		Name: name, Kind: SlidingLog, Limit: l, Headers: h, Costs: true,
		Start: func(context.Context) (*Server, error) {
			if err := checkLimit(name, l); err != nil {
				return nil, err
			}
			switch h {
			case PublishDraft6, PublishDraft3, PublishRetryAfter, PublishNone:
			default:
				return nil, fmt.Errorf("%s: headers %q: it can publish %q, %q, %q or %q",
					name, h, PublishDraft6, PublishDraft3, PublishRetryAfter, PublishNone)
			}
			if sched.downTo < sched.downFrom || sched.halveAt < 0 || sched.downFrom < 0 {
				return nil, fmt.Errorf("%s: halving at %s, outage [%s, %s): want times of 0 or more, the outage's end after its start",
					name, sched.halveAt, sched.downFrom, sched.downTo)
			}
			var handler http.Handler = &logServer{sched: sched, headers: h, log: newSlidingLog(l.Units, l.Window)}
			var configure func(*http.Server)
			if wrap != nil {
				var err error
				if handler, configure, err = wrap(handler); err != nil {
					return nil, fmt.Errorf("%s: %w", name, err)
				}
			}
			return serveLoopback(handler, configure)
		},
		Allowance: sched.greedyUnits,
	}
}

// logServer serves one sliding log under a mutex.
type logServer struct {
	sched   logSchedule
	headers Headers

	mu     sync.Mutex
	log    *slidingLog
	first  time.Time // the first request's arrival; the schedule's origin
	halved bool
}

// logVerdict is what the log said about one request, for its headers.
type logVerdict struct {
	down                bool
	admitted            bool
	capacity, remaining int
	reset, retryAfter   time.Duration
}

func (s *logServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cost, err := parseCost(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	v := s.decide(time.Now(), cost)
	if v.down {
		http.Error(w, "outage", http.StatusServiceUnavailable)
		return
	}
	hd := w.Header()
	if s.headers == PublishDraft6 || s.headers == PublishDraft3 {
		hd.Set("RateLimit-Limit", strconv.Itoa(v.capacity))
		hd.Set("RateLimit-Remaining", strconv.Itoa(v.remaining))
		hd.Set("RateLimit-Reset", strconv.FormatInt(secondsUp(v.reset), 10))
	}
	if s.headers == PublishDraft6 {
		hd.Set("RateLimit-Policy", fmt.Sprintf("%d;w=%d", v.capacity, secondsUp(s.sched.window)))
	}
	if v.admitted {
		okHandler.ServeHTTP(w, r)
		return
	}
	if s.headers != PublishNone {
		hd.Set("Retry-After", strconv.FormatInt(max(1, secondsUp(v.retryAfter)), 10))
	}
	http.Error(w, http.StatusText(http.StatusTooManyRequests), http.StatusTooManyRequests)
}

// decide applies the schedule and the log to a request of cost units
// arriving at now.
func (s *logServer) decide(now time.Time, cost int) logVerdict {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first.IsZero() {
		s.first = now
	}
	since := now.Sub(s.first)
	if s.sched.downAt(since) {
		return logVerdict{down: true}
	}
	if !s.halved && s.sched.halveAt > 0 && since >= s.sched.halveAt {
		s.log.setCapacity(s.sched.capacityAt(since))
		s.halved = true
	}
	v := logVerdict{capacity: s.log.capacity, admitted: s.log.admit(now, cost)}
	if !v.admitted {
		wait, ok := s.log.wait(now, cost)
		if !ok {
			wait = s.sched.window
		}
		v.retryAfter = wait
	}
	v.remaining = s.log.remaining(now)
	v.reset = s.log.untilOldestLeaves(now)
	return v
}
