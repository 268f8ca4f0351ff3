package httpx

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/resilience"
)

// StatusError is what the resilience layer tells the runner about a response
// that is not a success: its status and the verdict its classifier gave.
// It carries its own verdict (a method Verdict, which
// resilience.DefaultClassify asks for first), so the policy's classifier
// needs no help with it. The caller of RoundTrip does not see
// it: when the runner stops on such a response, the response itself is
// returned, as net/http does for every status.
type StatusError struct {
	StatusCode int
	Status     string
	Kind       resilience.Kind
	RetryAfter time.Duration
	// HasRetryAfter says the server named its wait even if RetryAfter is 0
	// (Retry-After: 0, or a date already past: retry at once).
	HasRetryAfter bool
}

func (e *StatusError) Error() string {
	s := e.Status
	if s == "" {
		s = strconv.Itoa(e.StatusCode)
	}
	s = "httpx: response " + s + " (" + e.Kind.String()
	switch {
	case e.RetryAfter > 0:
		s += ", retry after " + e.RetryAfter.String()
	case e.HasRetryAfter:
		s += ", retry at once"
	}
	return s + ")"
}

// Verdict is the classifier's verdict on the response.
func (e *StatusError) Verdict() resilience.Verdict {
	return resilience.Verdict{Kind: e.Kind, RetryAfter: e.RetryAfter, HasRetryAfter: e.HasRetryAfter}
}

// resilienceLayer makes a request's attempts through the resilience runner,
// one Run per request.
type resilienceLayer struct {
	next     http.RoundTripper
	policy   *resilience.Policy
	classify ResponseClassifier
}

// run is the state of one request's run.
type run struct {
	l    *resilienceLayer
	req  *http.Request
	once *onceBody // the body, when it has no GetBody
	n    int       // attempts made
	last *http.Response
	prev error // the last attempt's error
}

func (l *resilienceLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	r := &run{l: l, req: req}
	if req.Body != nil && req.Body != http.NoBody && req.GetBody == nil {
		r.once = &onceBody{rc: req.Body}
	}
	resp, err := resilience.Run(req.Context(), l.policy, r.attempt)
	if err == nil {
		r.handOver()
		return resp, nil
	}
	if resp != nil {
		// The run stopped on a response that is not a success (attempts,
		// budget or deadline exhausted, or a Permanent status), or on a
		// refusal of ours after it: the caller gets the server's last
		// response, as from any transport. If it stopped for anything else
		// after that response (the caller's cancellation, an open breaker),
		// the caller gets the error.
		var se *StatusError
		if resp == r.last && req.Context().Err() == nil && (errors.As(err, &se) || errors.Is(err, limit.ErrRateLimited)) {
			r.handOver()
			return resp, nil
		}
		resp.Body.Close()
	}
	if r.last != nil && r.last != resp {
		r.last.Body.Close()
	}
	r.closeBody()
	return nil, err
}

// handOver leaves a streamed request body to the transport whose response
// the caller gets: it may still be sending it, and closes it when done.
func (r *run) handOver() {
	if r.once != nil {
		r.once.own()
	}
}

// closeBody closes the request body when the request ends without a
// response, as a RoundTripper must: a streamed body the transports did not
// close because a retry might still have sent it, and any body when no
// attempt was made at all (the breaker refused, the caller's context had
// ended), since none reached a transport to close it. A body with GetBody
// that an attempt sent is that attempt's transport's to close.
func (r *run) closeBody() {
	switch {
	case r.once != nil:
		r.once.close()
	case r.n == 0 && r.req.Body != nil:
		r.req.Body.Close()
	}
}

// dropLast closes the last response, which a newer outcome replaces.
func (r *run) dropLast() {
	if r.last != nil {
		r.last.Body.Close()
		r.last = nil
	}
}

// attempt is one attempt: fn of the run.
func (r *run) attempt(ctx context.Context) (*http.Response, error) {
	resp, err := r.try(ctx)
	r.prev = err
	return resp, err
}

func (r *run) try(ctx context.Context) (*http.Response, error) {
	n := r.n
	r.n++

	req := r.req
	body := req.Body
	switch {
	case body == nil || body == http.NoBody:
	case req.GetBody != nil:
		if n > 0 {
			b, err := req.GetBody()
			if err != nil {
				return nil, &resilience.PermanentError{Err: err}
			}
			body = b
		}
	default:
		if r.once.read.Load() {
			return nil, &RewindError{Method: req.Method, URL: req.URL.Redacted(), Err: r.prev}
		}
		body = r.once
		r.once.handDown()
	}
	// Each attempt carries a record of its own for the layers inside to
	// write: what paced it is read below.
	a := new(attempt)
	req = req.WithContext(withAttempt(ctx, a))
	req.Body = body

	resp, err := r.l.next.RoundTrip(req)
	if err != nil {
		if r.last != nil && errors.Is(err, limit.ErrRateLimited) {
			// A layer of ours refused the attempt: the server said nothing
			// new, so its last response stays the one the caller gets if
			// the run ends here.
			return r.last, err
		}
		r.dropLast()
		return nil, err
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	r.dropLast() // a retry: the response that asked for it is done with
	v := r.l.classify(resp)
	if resp.StatusCode == http.StatusTooManyRequests && v.Kind == resilience.Throttled && !v.HasRetryAfter && v.RetryAfter <= 0 && a.pacer != nil {
		// An adaptive rate limiter paced the attempt and has slowed down on
		// the throttle: the retry waits its turn in the limiter's queue,
		// where the throttled backoff curve, seconds long, would idle the
		// caller instead. A 503 without a hint says the server is
		// unavailable, not that the rate is too high, and keeps the curve.
		v.HasRetryAfter = true
	}
	r.last = resp
	switch v.Kind {
	case resilience.Success, resilience.Permanent:
		// The run ends here, and the caller reads the body after fn has
		// returned: the attempt's context lives until the body is closed or
		// read to its end (failsafe-go #65, #123, #134).
		resp.Body = onDone(resp.Body, resilience.HoldAttemptContext(ctx))
		if v.Kind == resilience.Success {
			return resp, nil
		}
	default:
		// The runner may retry it: read it now, within bounds, so that
		// its connection can serve the retry and the body is still there
		// if this turns out to be the last response.
		b, whole, err := buffer(resp.Body)
		if err != nil {
			r.last = nil
			return nil, err
		}
		if whole {
			resp.Body = b
		} else {
			resp.Body = onDone(b, resilience.HoldAttemptContext(ctx))
		}
	}
	return resp, &StatusError{StatusCode: resp.StatusCode, Status: resp.Status,
		Kind: v.Kind, RetryAfter: v.RetryAfter, HasRetryAfter: v.HasRetryAfter}
}
