package httpx

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// limiterLayer takes a permit for each attempt from the request's limiter
// (the host's, or the shared one), sends the attempt, and reports what the
// response taught the limiter on the lease.
type limiterLayer struct {
	next     http.RoundTripper
	hosts    *hostSet
	cost     func(*http.Request) int
	throttle func(*http.Response) (bool, time.Duration)
}

func (l *limiterLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	// Busy from the lookup on, before Cost and the wait: a host whose
	// request is between finding its limiter and holding a permit keeps
	// the limiter, or a fresh one would admit beside it.
	e := l.hosts.use(req)
	if e.err != nil {
		closeRequestBody(req)
		return nil, e.err
	}
	if e.lim == nil { // not counted busy: nothing to give back
		return l.next.RoundTrip(req)
	}
	// Until the lease goes to the response body, the busy count, and the
	// lease once taken, are given back here whatever happens below, a
	// panic in Cost, in the next transport or in the throttle classifier
	// included: a lost concurrency permit would refuse the host's requests
	// for ever, and a host left busy would never be dropped. A zero lease
	// (none taken) releases nothing.
	var lease limit.Lease
	handed := false
	defer func() {
		if !handed {
			lease.Release()
			e.busy.Add(-1)
		}
	}()
	cost := 1
	if l.cost != nil {
		cost = l.cost(req)
	}
	var err error
	if lease, err = e.lim.AcquireN(req.Context(), cost); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		report(&lease, nil, err, l.throttle)
		return nil, err
	}
	report(&lease, resp, nil, l.throttle)
	if e.hold {
		// A concurrency permit is held until the caller is done with the body.
		held := &heldLease{lease: lease, e: e}
		handed = true
		resp.Body = onDone(resp.Body, held.release)
	}
	return resp, nil
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
// by a layer further in, none of which says anything about capacity (seed
// 000: "A network error does not reach the limiter"; a dropped lease
// changes nothing in the adaptive rate limiter either); nothing, a success,
// otherwise.
func report(lease *limit.Lease, resp *http.Response, err error, throttle func(*http.Response) (bool, time.Duration)) {
	if err != nil {
		var ne net.Error
		switch {
		case errors.Is(err, limit.ErrRateLimited):
			lease.Ignore()
		case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
			lease.Drop()
		default:
			lease.Ignore()
		}
		return
	}
	if throttle == nil {
		throttle = throttled
	}
	if ok, d := throttle(resp); ok {
		lease.Throttle(d)
		return
	}
	switch {
	case resp.StatusCode == http.StatusServiceUnavailable:
		lease.Drop()
	case resp.StatusCode >= 500:
		lease.Ignore()
	}
}

// closeRequestBody closes a request's body, as a RoundTripper must when it
// returns an error without sending the request.
func closeRequestBody(req *http.Request) {
	if req.Body != nil {
		req.Body.Close()
	}
}

// rateLimitLayer builds WithRateLimit's layer.
func rateLimitLayer(o limit.Options, c *limiterConfig, b *builder) (*hostSet, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	hold := o.Concurrency > 0 || o.Adaptive != nil
	if o.PerWindow != nil && c.idle > 0 && c.idle < time.Duration(o.PerWindow.Window) {
		c.idle = time.Duration(o.PerWindow.Window)
	} else if o.PerWindow != nil && c.idle == 0 {
		c.idle = max(defaultIdleTimeout, time.Duration(o.PerWindow.Window))
	}
	return newHostSet(c, func(host string) *hostEntry {
		oo := o
		if host != "" {
			if oo.Name == "" {
				oo.Name = host
			}
			oo.MeterProvider = b.meterProvider(o.MeterProvider)
			oo.Attributes = append(oo.Attributes[:len(oo.Attributes):len(oo.Attributes)], attribute.String(telemetry.AttrHost, host),
				attribute.String(telemetry.AttrLayer, metrics.LayerRateLimit))
		} else if oo.MeterProvider == nil {
			oo.MeterProvider = b.mp
		}
		lim, err := limit.New(oo)
		return limiterEntry(host, lim, err, hold, o.Adaptive != nil || o.AdaptiveRate != nil)
	}), nil
}
