package acceptance

import (
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// attemptCounter is the base transport a run gives its client: every
// attempt the client makes passes through it on its way to the wire, so the
// counts are what the server saw, whatever the client's layers do above.
//
// An attempt is counted when it starts before the end of the run and ends
// with a response (Throttled too if its status is 429 or 503, and
// Unavailable too if it is 503) or with a network error (NetworkErrors). An
// attempt that ends because its request's context ended — the call's
// deadline, or the run's end — is Cancelled instead: no verdict came back
// from the server.
type attemptCounter struct {
	wire *http.Transport
	end  time.Time // attempts that start at or after end are not counted

	attempts      atomic.Int64
	throttled     atomic.Int64
	unavailable   atomic.Int64
	networkErrors atomic.Int64
	cancelled     atomic.Int64
}

// newAttemptCounter returns a counter over a transport of its own, with
// room to keep a connection idle for each of callers (the default keeps
// two, which would make most callers dial afresh for every attempt).
func newAttemptCounter(callers int, end time.Time) *attemptCounter {
	wire := http.DefaultTransport.(*http.Transport).Clone()
	wire.MaxIdleConnsPerHost = callers
	wire.MaxIdleConns = callers
	wire.DialContext = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	return &attemptCounter{wire: wire, end: end}
}

func (c *attemptCounter) RoundTrip(req *http.Request) (*http.Response, error) {
	counted := time.Now().Before(c.end)
	resp, err := c.wire.RoundTrip(req)
	if !counted {
		return resp, err
	}
	switch {
	case err != nil && req.Context().Err() != nil:
		c.cancelled.Add(1)
	case err != nil:
		c.attempts.Add(1)
		c.networkErrors.Add(1)
	default:
		c.attempts.Add(1)
		if isThrottle(resp.StatusCode) {
			c.throttled.Add(1)
		}
		if resp.StatusCode == http.StatusServiceUnavailable {
			c.unavailable.Add(1)
		}
	}
	return resp, err
}

// CloseIdleConnections closes the idle connections of the wire transport;
// the run calls it when its client is done, so no keep-alive goroutine
// outlives the run.
func (c *attemptCounter) CloseIdleConnections() { c.wire.CloseIdleConnections() }

// isThrottle reports whether status is a refusal for load: 429, or 503.
func isThrottle(status int) bool {
	return status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
}
