package httpx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
)

// limiterLayer takes a permit for each attempt from the request's limiter
// (the host's, or the shared one), sends the attempt, and reports what the
// response taught the limiter on the lease.
type limiterLayer struct {
	next     http.RoundTripper
	hosts    *hostSet
	cost     func(*http.Request) int // the estimator of WithCost; nil: 1
	throttle func(*http.Response) (bool, time.Duration)
}

func (l *limiterLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	// Busy from the lookup on, before Cost and the wait: a host whose
	// request is between finding its limiter and holding a permit keeps
	// the limiter, or a fresh one would admit beside it. A host without a
	// limiter is not counted busy, and its requests go straight on.
	e := l.hosts.use(req)
	// Until the lease goes to the response body, the busy count, and the
	// lease once taken, are given back here whatever happens below, a
	// panic in Cost, in the next transport or in the throttle classifier
	// included: a lost concurrency permit would refuse the host's requests
	// for ever, and a host left busy would never be dropped. A zero lease
	// (none taken) releases nothing.
	var lease limit.Lease
	handed := e.lim == nil
	defer func() {
		if !handed {
			lease.Release()
			e.busy.Add(-1)
		}
	}()
	var resp *http.Response
	var err error
	sent := e.lim == nil
	if !sent {
		cost := 1
		if l.cost != nil {
			cost = l.cost(req)
		}
		var a *attempt
		req, a = attemptOf(req)
		a.paceBy(e.lim, cost)
		lease, err = e.lim.AcquireN(req.Context(), cost)
		sent = err == nil
	}
	if sent {
		resp, err = l.next.RoundTrip(req)
		if e.lim != nil {
			report(&lease, resp, err, l.throttle)
		}
	}
	switch {
	case !sent: // refused: the request's body is closed, as a transport's
		closeRequestBody(req)
	case err == nil && e.lim != nil && e.hold:
		// A concurrency permit is held until the caller is done with the body.
		handed = true
		resp.Body = onDone(resp.Body, (&heldLease{lease: lease, e: e}).release)
	}
	return resp, err
}

type heldLease struct {
	lease limit.Lease
	e     *hostEntry
}

func (h *heldLease) release() {
	h.lease.Release()
	h.e.busy.Add(-1)
}

// report tells the lease what the attempt taught: Throttle with the server's
// wait for a throttle (by default a 429, or a 503 with Retry-After); Drop for
// another 503 and for a timeout, the queueing signals of the adaptive
// concurrency limit; Ignore for another 5xx, a network error or a refusal
// by a layer further in, none of which says anything about capacity (a
// network error never reached the dependency's limit; a dropped lease
// changes nothing in the adaptive rate limiter either); nothing, a success,
// otherwise.
func report(lease *limit.Lease, resp *http.Response, err error, throttle func(*http.Response) (bool, time.Duration)) {
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, limit.ErrRateLimited):
			lease.Report(adaptive.Ignored, 0)
		case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			lease.Report(adaptive.Dropped, 0)
		default:
			lease.Report(adaptive.Ignored, 0)
		}
		return
	}
	if throttle == nil {
		throttle = throttled
	}
	if ok, d := throttle(resp); ok {
		lease.Report(adaptive.Throttled, d)
		return
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		lease.Report(adaptive.Dropped, 0)
	case resp.StatusCode >= 500:
		lease.Report(adaptive.Ignored, 0)
	}
}
