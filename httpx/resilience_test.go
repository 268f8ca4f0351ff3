package httpx

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
)

// loopback starts an httptest server and a transport of its own for it, both
// closed at the end of the test.
func loopback(t testing.TB, h http.Handler) (*httptest.Server, *http.Transport) {
	t.Helper()
	srv := httptest.NewServer(h)
	tr := &http.Transport{MaxIdleConnsPerHost: 64}
	t.Cleanup(func() {
		tr.CloseIdleConnections()
		srv.Close()
	})
	return srv, tr
}

func TestRequestBodyReplayedOnRetry(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	srv, base := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		seen = append(seen, string(b))
		n := len(seen)
		mu.Unlock()
		if n <= 2 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Write(b)
	}))
	client, err := NewClient(WithTransport(base), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})))
	if err != nil {
		t.Fatal(err)
	}
	const payload = `{"order": 42}`
	resp, err := client.Post(srv.URL, "application/json", strings.NewReader(payload))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || string(got) != payload {
		t.Errorf("response %d %q, want 200 %q", resp.StatusCode, got, payload)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 3 {
		t.Fatalf("server saw %d attempts, want 3", len(seen))
	}
	for i, s := range seen {
		if s != payload {
			t.Errorf("attempt %d sent %q, want %q", i, s, payload)
		}
	}
}

// streamBody hides its reader's type, so http.NewRequest sets no GetBody.
type streamBody struct{ io.Reader }

func TestRequestBodyWithoutGetBodyIsNotResentEmpty(t *testing.T) {
	var calls atomic.Int32
	srv, base := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		calls.Add(1)
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	tr := mustTransport(t, WithTransport(base), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})))
	resp, err := do(context.Background(), tr, http.MethodPost, srv.URL, streamBody{strings.NewReader("payload")})
	if resp != nil {
		resp.Body.Close()
	}
	var re *RewindError
	if !errors.As(err, &re) || !errors.Is(err, ErrBodyNotRewindable) {
		t.Fatalf("err = %v, want a *RewindError", err)
	}
	var se *StatusError
	if !errors.As(err, &se) || se.StatusCode != 503 {
		t.Errorf("RewindError.Err = %v, want the 503 that asked for the retry", re.Err)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("server saw %d attempts, want 1", n)
	}
}

// refuseOnce is a limiter that refuses its first request and grants the
// rest.
type refuseOnce struct{ n atomic.Int32 }

func (l *refuseOnce) Acquire(ctx context.Context) (limit.Lease, error) { return l.AcquireN(ctx, 1) }
func (l *refuseOnce) AcquireN(ctx context.Context, cost int) (limit.Lease, error) {
	if l.n.Add(1) == 1 {
		return limit.Lease{}, &limit.RateLimitedError{Limiter: "once", RetryAfter: time.Millisecond}
	}
	return limit.Lease{}, nil
}
func (l *refuseOnce) Name() string { return "once" }

func TestUnsentBodyWithoutGetBodyServesTheRetry(t *testing.T) {
	var got atomic.Value
	srv, base := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
	}))
	tr := mustTransport(t, WithTransport(base), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})), WithLimiter(&refuseOnce{}))
	resp, err := do(context.Background(), tr, http.MethodPost, srv.URL, streamBody{strings.NewReader("payload")})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if got.Load() != "payload" {
		t.Errorf("server got %q, want %q", got.Load(), "payload")
	}
}

func TestRetriedResponseBodiesClosed(t *testing.T) {
	var closed, finalClosed atomic.Int32
	big := strings.Repeat("x", 3*drainLimit) // longer than the layer reads
	s := &script{steps: []func(*http.Request) (*http.Response, error){
		func(r *http.Request) (*http.Response, error) { return respond(r, 503, "busy", &closed), nil },
		func(r *http.Request) (*http.Response, error) { return respond(r, 500, big, &closed), nil },
		func(r *http.Request) (*http.Response, error) { return respond(r, 429, "slow down", &closed), nil },
		func(r *http.Request) (*http.Response, error) { return respond(r, 200, "ok", &finalClosed), nil },
	}}
	tr := mustTransport(t, WithTransport(s), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})))
	resp, err := get(t, tr, "http://api.test/")
	if err != nil {
		t.Fatal(err)
	}
	if s.n() != 4 {
		t.Fatalf("%d attempts, want 4", s.n())
	}
	if n := closed.Load(); n != 3 {
		t.Errorf("%d of the 3 retried bodies closed", n)
	}
	if n := finalClosed.Load(); n != 0 {
		t.Errorf("the returned body was closed %d times before the caller closed it", n)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "ok" || finalClosed.Load() != 1 {
		t.Errorf("body %q closed %d times, want %q once", b, finalClosed.Load(), "ok")
	}
}

func TestLastRetryableResponseReturnedWhole(t *testing.T) {
	var closed atomic.Int32
	body := strings.Repeat("e", 1000)
	s := &script{steps: []func(*http.Request) (*http.Response, error){
		func(r *http.Request) (*http.Response, error) { return respond(r, 503, body, &closed), nil },
	}}
	tr := mustTransport(t, WithTransport(s), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{Retries: 2})))
	resp, err := get(t, tr, "http://api.test/")
	if err != nil {
		t.Fatalf("err = %v, want the last 503", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 503 || string(b) != body || s.n() != 3 {
		t.Errorf("got %d with %d bytes after %d attempts, want 503 with %d after 3", resp.StatusCode, len(b), s.n(), len(body))
	}
	if closed.Load() != 3 {
		t.Errorf("%d of 3 network bodies closed (the last was read into memory)", closed.Load())
	}
}

func TestResponseBodyReadableAfterRoundTrip(t *testing.T) {
	release := make(chan struct{})
	srv, base := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first "))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		w.Write([]byte("second"))
	}))
	var attempt context.Context
	seen := rtFunc(func(r *http.Request) (*http.Response, error) {
		attempt = r.Context()
		return base.RoundTrip(r)
	})
	tr := mustTransport(t, WithTransport(seen), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{AttemptTimeout: headroom.Duration(5 * time.Second)})))
	resp, err := get(t, tr, srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// RoundTrip has returned, and with it the runner's attempt. The runner
	// ends an attempt's context before Run returns, so it is alive now only
	// if it was held for the body; the rest of the body is still to come,
	// and must still be readable.
	if err := attempt.Err(); err != nil {
		t.Fatalf("attempt context ended when RoundTrip returned: %v", err)
	}
	close(release)
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(b) != "first second" {
		t.Fatalf("read %q, %v; want %q", b, err, "first second")
	}
}

func TestAttemptContextLivesUntilBodyDone(t *testing.T) {
	for _, how := range []string{"close", "eof"} {
		t.Run(how, func(t *testing.T) {
			var ctx context.Context
			s := &script{steps: []func(*http.Request) (*http.Response, error){
				func(r *http.Request) (*http.Response, error) {
					ctx = r.Context()
					return respond(r, 200, "body", nil), nil
				},
			}}
			tr := mustTransport(t, WithTransport(s), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{AttemptTimeout: headroom.Duration(time.Minute), Timeout: headroom.Duration(2 * time.Minute)})))
			resp, err := get(t, tr, "http://api.test/")
			if err != nil {
				t.Fatal(err)
			}
			if err := ctx.Err(); err != nil {
				t.Fatalf("attempt context ended before the body was read: %v", err)
			}
			if how == "close" {
				resp.Body.Close()
			} else {
				io.ReadAll(resp.Body)
			}
			if ctx.Err() == nil {
				t.Error("attempt context still alive after the body was done")
			}
			resp.Body.Close()
		})
	}
}

// The attempt's deadline still bounds the body, as http.Client.Timeout
// does; and a Retry-After is waited exactly. Both in a bubble, on fake time.
func TestRetryAfterAndAttemptDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var ctx context.Context
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			func(r *http.Request) (*http.Response, error) {
				return respond(r, 429, "", nil, "Retry-After", "7"), nil
			},
			func(r *http.Request) (*http.Response, error) {
				ctx = r.Context()
				return respond(r, 200, "ok", nil), nil
			},
		}}
		tr, err := NewTransport(WithTransport(s), WithoutQuotaGuard(),
			WithResilience(fastPolicy(resilience.Options{AttemptTimeout: headroom.Duration(3 * time.Second)})))
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		start := time.Now()
		resp, err := get(t, tr, "http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if d := time.Since(start); d != 7*time.Second {
			t.Errorf("took %v, want the Retry-After, 7s", d)
		}
		time.Sleep(2 * time.Second)
		if ctx.Err() != nil {
			t.Fatal("attempt context ended before its deadline while the body was unread")
		}
		time.Sleep(2 * time.Second)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Errorf("ctx.Err() = %v after the attempt timeout, want DeadlineExceeded", ctx.Err())
		}
	})
}

func TestCancelledDuringDelayClosesResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var closed atomic.Int32
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			func(r *http.Request) (*http.Response, error) {
				return respond(r, 503, "busy", &closed, "Retry-After", "10"), nil
			},
		}}
		tr, err := NewTransport(WithTransport(s), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		go func() {
			time.Sleep(5 * time.Second)
			cancel()
		}()
		resp, err := do(ctx, tr, http.MethodGet, "http://api.test/", nil)
		if resp != nil || !errors.Is(err, context.Canceled) {
			t.Fatalf("got %v, %v; want no response and context.Canceled", resp, err)
		}
		if closed.Load() != 1 {
			t.Errorf("the 503's body was closed %d times, want 1", closed.Load())
		}
	})
}

func TestClassify(t *testing.T) {
	now := time.Now()
	reset := now.Add(30 * time.Second).Unix()
	cases := []struct {
		status int
		kv     []string
		kind   resilience.Kind
		ra     time.Duration // 0: none expected; -1: any above 0
	}{
		{200, nil, resilience.Success, 0},
		{304, nil, resilience.Success, 0},
		{404, nil, resilience.Permanent, 0},
		{400, nil, resilience.Permanent, 0},
		{403, nil, resilience.Permanent, 0},
		{403, []string{"X-RateLimit-Remaining", "12"}, resilience.Permanent, 0},
		{403, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", itoa64(reset)}, resilience.Throttled, -1},
		{403, []string{"Retry-After", "60"}, resilience.Throttled, 60 * time.Second},
		{429, []string{"Retry-After", "2"}, resilience.Throttled, 2 * time.Second},
		{429, []string{"Retry-After", "1.5"}, resilience.Throttled, 1500 * time.Millisecond},
		{429, []string{"Retry-After", "999999999"}, resilience.Throttled, 5 * time.Minute},
		{429, nil, resilience.Throttled, 0},
		// GitHub's primary limit, as a 429: no Retry-After, wait for the reset.
		{429, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", itoa64(reset)}, resilience.Throttled, -1},
		{429, []string{"X-RateLimit-Remaining", "3", "X-RateLimit-Reset", itoa64(reset)}, resilience.Throttled, 0},
		{429, []string{"Retry-After", "2", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", itoa64(reset)}, resilience.Throttled, 2 * time.Second},
		{429, []string{"X-RateLimit-Remaining", "0", "X-RateLimit-Reset", itoa64(now.Add(time.Hour).Unix())}, resilience.Throttled, 5 * time.Minute},
		{503, nil, resilience.Throttled, 0},
		{503, []string{"Retry-After", "3"}, resilience.Throttled, 3 * time.Second},
		{500, []string{"Retry-After", "3"}, resilience.Transient, 0},
		{502, nil, resilience.Transient, 0},
		{504, nil, resilience.Transient, 0},
		{408, nil, resilience.Transient, 0},
	}
	for _, c := range cases {
		resp := respond(nil, c.status, "", nil, c.kv...)
		v := Classify(resp)
		ok := v.Kind == c.kind
		switch {
		case c.ra == -1:
			ok = ok && v.RetryAfter > 25*time.Second && v.RetryAfter <= 30*time.Second
		default:
			ok = ok && v.RetryAfter == c.ra
		}
		if !ok {
			t.Errorf("Classify(%d %v) = %v", c.status, c.kv, v)
		}
	}
	// The limiter layers' throttle classifier reads the reset of a 429 too.
	resp := respond(nil, 429, "", nil, "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", itoa64(reset))
	if ok, d := throttled(resp); !ok || d <= 25*time.Second || d > 30*time.Second {
		t.Errorf("throttled(429 with an exhausted quota resetting in 30s) = %v, %v; want true, about 30s", ok, d)
	}
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// A streamed request body (no GetBody) on a full-duplex exchange: the
// server answers with its headers first and echoes what the client goes on
// sending. Once an attempt has handed the body to the transport and a
// response came back, the body is the transport's: RoundTrip returning
// must not close it under the upload.
func TestStreamingRequestBodyOutlivesRoundTrip(t *testing.T) {
	srv, base := loopback(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		w.WriteHeader(200)
		w.(http.Flusher).Flush()
		b := make([]byte, 64)
		for {
			n, err := r.Body.Read(b)
			w.Write(b[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}))
	tr := mustTransport(t, WithTransport(base), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})))
	pr, pw := io.Pipe()
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL, pr)
	resp, err := tr.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	_, werr := io.WriteString(pw, "hello\n")
	pw.Close()
	got, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if werr != nil || string(got) != "hello\n" {
		t.Errorf("writing the body after RoundTrip returned: %v; echoed %q, want %q", werr, got, "hello\n")
	}
}

// trackedBody is a request body that counts its Close calls.
type trackedBody struct {
	io.Reader
	closed *atomic.Int32
}

func (b trackedBody) Close() error { b.closed.Add(1); return nil }

// A RoundTripper must close the request body, errors included: also when
// the run makes no attempt at all (the breaker is open, the caller's
// context has already ended), for a body with GetBody as for one without.
func TestRequestBodyClosedWhenNoAttempt(t *testing.T) {
	br, err := resilience.NewBreaker(resilience.BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	opener := policyOnly(resilience.Default(resilience.Options{Breaker: br, Retries: -1}))
	_, _ = resilience.Run(context.Background(), opener, func(context.Context) (int, error) { // open it
		return 0, errors.New("connection reset")
	})
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
		WithResilience(fastPolicy(resilience.Options{Breaker: br})))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		getBody bool
	}{
		{"breaker open", context.Background(), true},
		{"context cancelled", cancelled, true},
		{"breaker open, no GetBody", context.Background(), false},
		{"context cancelled, no GetBody", cancelled, false},
	} {
		var closed atomic.Int32
		req, _ := http.NewRequestWithContext(c.ctx, http.MethodPost, "http://a.test/", nil)
		req.Body = trackedBody{strings.NewReader("x"), &closed}
		if c.getBody {
			req.GetBody = func() (io.ReadCloser, error) { return trackedBody{strings.NewReader("x"), &closed}, nil }
		}
		if resp, err := tr.RoundTrip(req); err == nil {
			resp.Body.Close()
			t.Fatalf("%s: no error", c.name)
		}
		if n := closed.Load(); n != 1 {
			t.Errorf("%s: request body closed %d times, want 1", c.name, n)
		}
	}
}

// Retry-After: 0, or a date already past, asks for the retry at once: it is
// a hint, not the absence of one, and the throttled curve (4 s here) does
// not apply.
func TestRetryAfterZeroRetriesAtOnce(t *testing.T) {
	for _, ra := range []string{"0", "Fri, 31 Dec 1999 23:00:00 GMT"} { // a bubble starts at midnight, 1 January 2000
		t.Run(ra, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){
					func(r *http.Request) (*http.Response, error) {
						return respond(r, 429, "", nil, "Retry-After", ra), nil
					},
					func(r *http.Request) (*http.Response, error) { return respond(r, 200, "ok", nil), nil },
				}}
				tr := mustTransport(t, WithTransport(s), WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))))
				start := time.Now()
				resp, err := get(t, tr, "http://api.test/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if d := time.Since(start); d != 0 {
					t.Errorf("the retry went after %v, want at once", d)
				}
				if s.n() != 2 {
					t.Errorf("%d attempts, want 2", s.n())
				}
			})
		})
	}
}

// With an adaptive rate limiter on the host, a 429 without a hint is
// retried at once — the limiter slowed down on it, and the retry waits its
// turn there, a unit at its rate (53 ms at the default 1,125 a minute) —
// while a 503 without a hint, an unavailable server, keeps the throttled
// curve (4 s ± 20%).
func TestPacedThrottleRetriesAtOnce(t *testing.T) {
	for _, c := range []struct {
		status int
		atOnce bool
	}{{429, true}, {503, false}} {
		t.Run(strconv.Itoa(c.status), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				s := &script{steps: []func(*http.Request) (*http.Response, error){
					func(r *http.Request) (*http.Response, error) { return respond(r, c.status, "", nil), nil },
					ok200,
				}}
				tr := mustTransport(t, WithTransport(s), WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))),
					WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{}}))
				start := time.Now()
				resp, err := get(t, tr, "http://api.test/")
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if d := time.Since(start); c.atOnce != (d < time.Second) {
					t.Errorf("the retry went after %v; want it paced by the limiter: %v, on the curve: %v", d, c.atOnce, !c.atOnce)
				}
			})
		})
	}
}

// A policy whose options conflict is nil, and a client built with it,
// its error ignored, is refused when built, never at the first call.
func TestConflictingPolicyRefusedWhenBuilt(t *testing.T) {
	p, perr := resilience.HTTP(resilience.Options{Timeout: headroom.Duration(2 * time.Second), AttemptTimeout: headroom.Duration(5 * time.Second)})
	if perr == nil || p != nil {
		t.Fatalf("HTTP with a 5s attempt in a 2s timeout = %v, %v; want nil and an error", p, perr)
	}
	const want = "httpx: WithResilience = <nil>: want a policy, such as resilience.HTTP(resilience.Options{})'s"
	if _, err := NewClient(WithResilience(p)); !errors.Is(err, headroom.ErrConfig) || err.Error() != want {
		t.Errorf("NewClient: %v; want %s", err, want)
	}
	tr, err := NewTransport(WithResilience(p))
	if !errors.Is(err, headroom.ErrConfig) || err.Error() != want {
		t.Errorf("NewTransport: %v; want %s", err, want)
	}
	if tr != nil {
		t.Error("NewTransport returned a transport with the error")
	}
}
