package httpx

import (
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/resilience"
)

// rtFunc is a RoundTripper made of a function.
type rtFunc func(*http.Request) (*http.Response, error)

func (f rtFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// countBody is a response body that counts its Close calls.
type countBody struct {
	io.Reader
	closed *atomic.Int32
}

func (b *countBody) Close() error {
	b.closed.Add(1)
	return nil
}

// respond makes a response to req with status, headers (name, value pairs)
// and body.
func respond(req *http.Request, status int, body string, closed *atomic.Int32, kv ...string) *http.Response {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	var rc io.ReadCloser = io.NopCloser(strings.NewReader(body))
	if closed != nil {
		rc = &countBody{Reader: strings.NewReader(body), closed: closed}
	}
	return &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h, Body: rc,
		Request: req, ProtoMajor: 1, ProtoMinor: 1, ContentLength: int64(len(body))}
}

// fastPolicy is HTTP with o that retries quickly: constant 1 ms curves, and
// no breaker or budget unless o gives one.
func fastPolicy(o resilience.Options) *resilience.Policy {
	quick := headroom.Backoff{Initial: headroom.Duration(time.Millisecond), Multiplier: 1, Jitter: new(0.0)}
	o.Backoff, o.ThrottledBackoff = quick, quick
	o.NoBreaker, o.NoBudget = o.Breaker == nil, o.Budget == nil
	return policyOnly(resilience.HTTP(o))
}

// policyOnly is the policy p: WithResilience reports its error, if any,
// when the client is built.
func policyOnly(p *resilience.Policy, _ error) *resilience.Policy { return p }

// mustTransport builds a transport or fails the test, and closes it at the
// end.
func mustTransport(t testing.TB, opts ...Option) *Transport {
	t.Helper()
	tr, err := NewTransport(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return tr
}

// get sends a GET for url through rt.
func get(t testing.TB, rt http.RoundTripper, url string) (*http.Response, error) {
	t.Helper()
	return do(context.Background(), rt, http.MethodGet, url, nil)
}

// getWithin sends a GET for url through rt with a deadline d away: a request
// that would wait longer for a permit than that is refused at once.
func getWithin(t testing.TB, rt http.RoundTripper, url string, d time.Duration) (*http.Response, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	return do(ctx, rt, http.MethodGet, url, nil)
}

func do(ctx context.Context, rt http.RoundTripper, method, url string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, body)
	if err != nil {
		return nil, err
	}
	return rt.RoundTrip(req)
}

// script is a fake transport that answers each call with the next of its
// responses, repeating the last.
type script struct {
	mu    sync.Mutex
	calls int
	reqs  []*http.Request
	steps []func(*http.Request) (*http.Response, error)
}

func (s *script) RoundTrip(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	i := min(s.calls, len(s.steps)-1)
	s.calls++
	s.reqs = append(s.reqs, req)
	s.mu.Unlock()
	return s.steps[i](req)
}

func (s *script) n() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}
