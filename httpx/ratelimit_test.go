package httpx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
	"github.com/headroom-go/headroom/telemetry"
)

func ok200(r *http.Request) (*http.Response, error) { return respond(r, 200, "ok", nil), nil }

func TestRateLimitPerHost(t *testing.T) {
	reader, mp := metricstest.New(t)

	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(), WithMeterProvider(mp),
		WithRateLimit(limit.Options{PermitsPerSecond: 1, Name: "api"}))
	for _, host := range []string{"a.test", "b.test"} {
		resp, err := get(t, tr, "http://"+host+"/")
		if err != nil {
			t.Fatalf("first request to %s: %v", host, err)
		}
		resp.Body.Close()
	}
	// Each host has spent its one permit; a second request is refused.
	_, err := get(t, tr, "http://a.test/")
	var rl *limit.RateLimitedError
	if !errors.As(err, &rl) || rl.Limiter != "api" || rl.RetryAfter <= 0 {
		t.Fatalf("second request = %v, want a *limit.RateLimitedError from api with a RetryAfter", err)
	}
	if n := tr.hosts[0].len(); n != 2 {
		t.Errorf("%d host limiters, want 2", n)
	}

	// The metrics carry the host.
	hosts := map[string]int64{}
	for _, p := range metricstest.Collect(t, reader) {
		if p.Name != telemetry.LeasesName {
			continue
		}
		if p.Attr(telemetry.AttrOutcome) == metrics.OutcomeAcquired {
			hosts[p.Attr(telemetry.AttrServerAddress)] += int64(p.Value)
		}
		if n := p.Attr(telemetry.AttrLimiter); n != "api" {
			t.Errorf("limiter name %v, want api", n)
		}
	}
	if hosts["a.test"] != 1 || hosts["b.test"] != 1 {
		t.Errorf("acquired leases by host = %v, want a.test:1 b.test:1", hosts)
	}
}

func TestRateLimitShared(t *testing.T) {
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
		WithRateLimit(limit.Options{PermitsPerSecond: 1}, WithSharedLimiter()))
	resp, err := get(t, tr, "http://a.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := get(t, tr, "http://b.test/"); !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("request to another host = %v, want refused by the shared limiter", err)
	}
}

func TestConcurrencyPermitHeldUntilBodyDone(t *testing.T) {
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
		WithRateLimit(limit.Options{Concurrency: 1}))
	first, err := get(t, tr, "http://a.test/")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := get(t, tr, "http://a.test/"); !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("second request while the first body is open = %v, want refused", err)
	}
	io.ReadAll(first.Body) // EOF releases it...
	second, err := get(t, tr, "http://a.test/")
	if err != nil {
		t.Fatalf("after the first body was read: %v", err)
	}
	second.Body.Close() // ...and so does Close
	second.Body.Close()
	third, err := get(t, tr, "http://a.test/")
	if err != nil {
		t.Fatalf("after the second body was closed: %v", err)
	}
	third.Body.Close()
	first.Body.Close()
}

// Hosts whose limiters are at rest again are dropped to keep the map within
// MaxHosts.
func TestHostMapBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{PermitsPerSecond: 100}, WithMaxHosts(3)))
		for i := range 10 {
			resp, err := get(t, tr, fmt.Sprintf("http://h%d.test/", i))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if n := tr.hosts[0].len(); n > 3 {
				t.Fatalf("%d hosts kept, want at most 3", n)
			}
			time.Sleep(10 * time.Millisecond) // the permit is back: the limiter is at rest
		}
	})
}

func TestHostMapDropsIdle(t *testing.T) {
	s := newHostSet(&limiterConfig{idle: time.Second}, 0, func(string) *hostEntry { return &hostEntry{} })
	req := func(h string) *http.Request { r, _ := http.NewRequest("GET", "http://"+h+"/", nil); return r }
	s.get(req("a"))
	busy := s.get(req("b"))
	busy.busy.Add(1)
	t0 := time.Now().UnixNano()
	s.sweep(t0 + int64(2*time.Second)) // a and b used since the last sweep: kept
	s.get(req("c"))
	s.sweep(t0 + int64(4*time.Second)) // a unused, b busy, c used
	if s.len() != 2 || s.m["a"] != nil || s.m["b"] == nil || s.m["c"] == nil {
		t.Errorf("after the sweeps: %v, want b and c", s.m)
	}
}

func TestLeaseReport(t *testing.T) {
	cases := []struct {
		resp *http.Response
		err  error
		want adaptive.Outcome
		ra   time.Duration
	}{
		{respond(nil, 200, "", nil), nil, adaptive.Success, 0},
		{respond(nil, 404, "", nil), nil, adaptive.Success, 0},
		{respond(nil, 429, "", nil, "Retry-After", "4"), nil, adaptive.Throttled, 4 * time.Second},
		{respond(nil, 429, "", nil), nil, adaptive.Throttled, 0},
		{respond(nil, 503, "", nil, "Retry-After", "2"), nil, adaptive.Throttled, 2 * time.Second},
		{respond(nil, 503, "", nil), nil, adaptive.Dropped, 0},
		{respond(nil, 500, "", nil), nil, adaptive.Ignored, 0},
		{nil, errors.New("connection reset"), adaptive.Ignored, 0},
		{nil, context.DeadlineExceeded, adaptive.Dropped, 0},
		{nil, &limit.RateLimitedError{Limiter: "quota"}, adaptive.Ignored, 0},
	}
	for _, c := range cases {
		var l limit.Lease
		report(&l, c.resp, c.err, nil)
		if l.Outcome() != c.want || l.RetryAfter() != c.ra {
			status := 0
			if c.resp != nil {
				status = c.resp.StatusCode
			}
			t.Errorf("report(%d, %v) = %v %v, want %v %v", status, c.err, l.Outcome(), l.RetryAfter(), c.want, c.ra)
		}
	}
}

// The layer reports each response on its lease: a success is measured, a
// throttle (once the limiter has measured a half second) cuts the rate, a
// 500 teaches nothing. Fake time.
func TestAdaptiveRateLearnsFromThrottles(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		lim, err := limit.AdaptiveRate(adaptive.RateConfig{InitialUnitsPerMinute: 6000, MaxPause: headroom.Duration(-1)})
		if err != nil {
			t.Fatal(err)
		}
		defer lim.Close()
		s := &script{steps: []func(*http.Request) (*http.Response, error){
			ok200,
			func(r *http.Request) (*http.Response, error) {
				return respond(r, 429, "", nil, "Retry-After", "1"), nil
			},
			func(r *http.Request) (*http.Response, error) { return respond(r, 500, "", nil), nil },
			ok200,
		}}
		tr := mustTransport(t, WithTransport(s), WithoutQuotaGuard(), WithLimiter(lim))
		for range 4 {
			resp, err := get(t, tr, "http://a.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			time.Sleep(600 * time.Millisecond) // a half-second period measured
		}
		c := lim.State().Counts
		if c.Throttles != 1 || c.Cuts != 1 {
			t.Errorf("counts %+v, want one throttle and one cut", c)
		}
		if r := lim.State().Rate; r >= 6000 {
			t.Errorf("rate %v after a throttle, want below 6000", r)
		}
	})
}

func TestAdaptiveRateCostEstimator(t *testing.T) {
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
		WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{InitialUnitsPerMinute: 60, MinUnitsPerMinute: 60, MaxUnitsPerMinute: 60,
			BurstTime: headroom.Duration(5 * time.Second)}, QueueLimit: new(0)},
			WithCost(func(r *http.Request) int {
				if r.Method == http.MethodGet {
					return 0 // free: never waits
				}
				return 5
			})))
	for range 20 {
		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatalf("a free request: %v", err)
		}
		resp.Body.Close()
	}
	// A 5-unit bucket: one POST of 5 goes, the next is refused.
	resp, err := do(context.Background(), tr, http.MethodPost, "http://a.test/", nil)
	if err != nil {
		t.Fatalf("first POST: %v", err)
	}
	resp.Body.Close()
	if _, err := do(context.Background(), tr, http.MethodPost, "http://a.test/", nil); !errors.Is(err, limit.ErrRateLimited) {
		t.Errorf("second POST = %v, want refused", err)
	}
}

// Options changed through a pointer after the layer was built cannot make
// a host's limiter: that host's requests fail with the validation error,
// never reaching the base transport, and the transport does not panic.
func TestRateLimitOptionsChangedAfterBuild(t *testing.T) {
	win := &limit.WindowOptions{Permits: 5, Window: headroom.Duration(time.Minute)}
	sent := 0
	base := rtFunc(func(r *http.Request) (*http.Response, error) { sent++; return ok200(r) })
	tr := mustTransport(t, WithTransport(base), WithoutQuotaGuard(), WithRateLimit(limit.Options{PerWindow: win}))
	win.Permits = 0
	resp, err := get(t, tr, "http://a.test/")
	var oe *headroom.ConfigError
	if resp != nil || !errors.Is(err, headroom.ErrConfig) || !errors.As(err, &oe) || oe.Field != "PerWindow.Permits" {
		t.Fatalf("got %v, %v; want an headroom.ErrConfig naming PerWindow.Permits", resp, err)
	}
	if sent != 0 {
		t.Errorf("%d requests sent through a host without a limiter", sent)
	}
}

// A request that waits in our own limiter's queue until its attempt timeout
// never reached the dependency: the layer refuses it (a
// *limit.RateLimitedError for the deadline, which still matches the
// context's error), the runner takes it as a self-imposed throttle, and the
// breaker does not open against a dependency that answered every request
// it saw at once.
func TestQueueWaitTimeoutIsSelfImposed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := resilience.NewBreaker(resilience.BreakerOptions{ConsecutiveFailures: 2, BreakDuration: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithResilience(fastPolicy(resilience.Options{Retries: 1, Breaker: br, AttemptTimeout: headroom.Duration(100 * time.Millisecond), Timeout: headroom.Duration(10 * time.Second)})),
			WithRateLimit(limit.Options{Concurrency: 1, QueueLimit: new(10), Name: "local"}))

		first, err := get(t, tr, "http://a.test/") // holds the only permit until its body is done
		if err != nil {
			t.Fatal(err)
		}
		_, err = get(t, tr, "http://a.test/") // both attempts time out in our queue
		rl, ok := errors.AsType[*limit.RateLimitedError](err)
		if !ok || rl.Limiter != "local" || rl.Reason != telemetry.ReasonDeadline || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("request queued past its attempt timeout = %v; want a refusal by local for the deadline", err)
		}
		if _, ok := errors.AsType[*resilience.TimeoutError](err); ok {
			t.Errorf("err = %v; a wait in our own queue is no timeout of the dependency", err)
		}
		first.Body.Close()

		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatalf("third request = %v (breaker %v); only our own queue was full", err, br.State())
		}
		resp.Body.Close()
	})
}

// A caller's own cancellation while queued is the caller's error, not a
// refusal.
func TestQueueWaitCancelledIsCallersError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{Concurrency: 1, QueueLimit: new(10)}))
		first, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatal(err)
		}
		defer first.Body.Close()
		ctx, cancel := context.WithCancel(t.Context())
		time.AfterFunc(time.Second, cancel)
		_, err = do(ctx, tr, http.MethodGet, "http://a.test/", nil)
		if err != context.Canceled {
			t.Errorf("err = %v; want context.Canceled itself", err)
		}
	})
}

// A panic below the limiter layer (in the base transport or a
// WithThrottleClassifier) must not keep the attempt's permit: later requests
// to the host would be refused for ever with nothing in flight.
func TestPanicBelowLimiterReleasesPermit(t *testing.T) {
	for _, where := range []string{"transport", "throttle classifier"} {
		var calls atomic.Int32
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1) == 1 && where == "transport" {
				panic("boom")
			}
			return ok200(r)
		})
		var classified atomic.Int32
		tr := mustTransport(t, WithTransport(base), WithoutQuotaGuard(), WithResilience(fastPolicy(resilience.Options{})),
			WithRateLimit(limit.Options{Concurrency: 1}, WithThrottleClassifier(func(*http.Response) (bool, time.Duration) {
				if classified.Add(1) == 1 && where != "transport" {
					panic("boom")
				}
				return false, 0
			})))
		func() {
			defer func() { recover() }() // as net/http's server recovers a handler's panic
			get(t, tr, "http://a.test/")
		}()
		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatalf("%s: request after a recovered panic = %v; the permit was never released", where, err)
		}
		resp.Body.Close()
		if e := tr.hosts[0].get(httptestRequest(t, "http://a.test/")); e.busy.Load() != 0 {
			t.Errorf("%s: busy = %d with nothing in flight", where, e.busy.Load())
		}
	}
}

// WithMaxHosts drops the least recently used host that is at rest, never one
// used a moment ago: its limiter (and the permits it has spent) would be
// forgotten, and a fresh one would admit more than the limit.
func TestHostMapEvictsLeastRecentlyUsed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{PermitsPerSecond: 1}, WithMaxHosts(2)))
		send := func(host string) error {
			resp, err := get(t, tr, "http://"+host+"/")
			if err == nil {
				resp.Body.Close()
			}
			return err
		}
		send("b.test") // the least recently used
		if err := send("a.test"); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Second) // both buckets full again
		send("a.test")          // a use
		send("a.test")          // refused, but a use
		send("c.test")          // the map is full: b.test goes
		// a.test's limiter remembers its spent permit.
		if err := send("a.test"); err == nil {
			t.Fatalf("a.test, used last, was dropped for c.test instead of b.test: hosts %v", hostNames(tr.hosts[0]))
		}
		if got := hostNames(tr.hosts[0]); !slices.Equal(got, []string{"a.test", "c.test"}) {
			t.Fatalf("hosts %v, want [a.test c.test]", got)
		}
	})
}

// A request waiting in its host's queue counts as the host being in use:
// the host's limiter is not dropped under it for a new host.
func TestWaitingHostNotEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{PermitsPerSecond: 1, QueueLimit: new(1)}, WithMaxHosts(1)))
		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		a := tr.hosts[0].get(httptestRequest(t, "http://a.test/"))
		done := make(chan error)
		go func() {
			resp, err := get(t, tr, "http://a.test/") // waits about a second in a.test's queue
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		synctest.Wait()
		resp, err = get(t, tr, "http://b.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := tr.hosts[0].get(httptestRequest(t, "http://a.test/")); got != a {
			t.Error("a.test's limiter was dropped while a request waited in its queue")
		}
		if err := <-done; err != nil {
			t.Fatalf("the queued request: %v", err)
		}
	})
}

// A request counts as its host's use from the moment it finds the host's
// limiter, before its Cost is estimated: a new host's sweep in between
// would drop the limiter the request then takes its permit from, and the
// host's next request would get a fresh one beside it, two permits of a
// Concurrency 1 at once.
func TestHostInCostNotEvicted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inCost, proceed := make(chan struct{}), make(chan struct{})
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{Concurrency: 1}, WithMaxHosts(1), WithCost(func(r *http.Request) int {
				if r.Header.Get("Block") != "" {
					inCost <- struct{}{}
					<-proceed
				}
				return 1
			})))
		first := httptestRequest(t, "http://a.test/")
		first.Header.Set("Block", "1")
		done := make(chan *http.Response)
		go func() {
			resp, err := tr.RoundTrip(first)
			if err != nil {
				t.Error(err)
			}
			done <- resp
		}()
		<-inCost // a.test's request has found its limiter, not yet its permit
		// The map is full: b.test's entry comes after a sweep.
		resp, err := get(t, tr, "http://b.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := hostNames(tr.hosts[0]); !slices.Equal(got, []string{"a.test", "b.test"}) {
			t.Errorf("hosts %v while a.test's request estimates its cost, want [a.test b.test]", got)
		}
		close(proceed)
		held := <-done // a.test's only permit, until its body is closed
		if held == nil {
			return
		}
		defer held.Body.Close()
		if resp, err := get(t, tr, "http://a.test/"); !errors.Is(err, limit.ErrRateLimited) {
			if err == nil {
				resp.Body.Close()
			}
			t.Errorf("a.test while its first request holds the only permit = %v; want refused", err)
		}
	})
}

// A request that ends without a lease gives its use of the host back,
// whichever way it ends: a host counted busy for ever would never be
// dropped, and WithMaxHosts would not bound the map.
func TestHostNotBusyAfterRequestWithoutLease(t *testing.T) {
	win := &limit.WindowOptions{Permits: 5, Window: headroom.Duration(time.Minute)}
	c, err := ParseConfig([]byte(`{"limiters": {"one": {"concurrency": 1}}, "rateLimit": "one", "hosts": {"a.test": {"rateLimit": "none"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	opts, err := c.Options()
	if err != nil || len(opts) != 1 {
		t.Fatalf("options %v, %v; want the rate-limit layer alone", opts, err)
	}
	none := opts[0]
	for _, c := range []struct {
		name string
		opt  Option
		send func(tr *Transport)
	}{
		{"Cost panics", WithRateLimit(limit.Options{Concurrency: 1}, WithCost(func(*http.Request) int { panic("boom") })),
			func(tr *Transport) {
				defer func() { recover() }()
				get(t, tr, "http://a.test/")
			}},
		{"refused", WithRateLimit(limit.Options{Concurrency: 1}), func(tr *Transport) {
			held, err := get(t, tr, "http://a.test/")
			if err != nil {
				t.Fatal(err)
			}
			if _, err := get(t, tr, "http://a.test/"); !errors.Is(err, limit.ErrRateLimited) {
				t.Fatalf("second request = %v; want refused", err)
			}
			held.Body.Close()
		}},
		{"the host's limiter failed", WithRateLimit(limit.Options{PerWindow: win}), func(tr *Transport) {
			win.Permits = 0 // the host's limiter cannot be built
			get(t, tr, "http://a.test/")
		}},
		{"no limiter for the host", none, func(tr *Transport) {
			resp, err := get(t, tr, "http://a.test/")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}},
	} {
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(), c.opt)
		c.send(tr)
		if e := tr.hosts[0].get(httptestRequest(t, "http://a.test/")); e.busy.Load() != 0 {
			t.Errorf("%s: busy = %d with nothing in flight", c.name, e.busy.Load())
		}
	}
}

// Host names are case-insensitive and a scheme's default port is the host
// without a port: http://A.TEST:80/ is http://a.test/, with one limiter.
func TestHostKeyIgnoresCaseAndDefaultPort(t *testing.T) {
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
		WithRateLimit(limit.Options{PermitsPerSecond: 1}))
	for _, u := range []string{"http://a.test/", "https://b.test/", "http://c.test:8080/", "http://[::1]/"} {
		resp, err := get(t, tr, u)
		if err != nil {
			t.Fatalf("%s: %v", u, err)
		}
		resp.Body.Close()
	}
	for _, u := range []string{"http://A.TEST/", "http://a.test:80/", "https://B.test:443/", "http://C.test:8080/", "http://[::1]:80/"} {
		if _, err := get(t, tr, u); !errors.Is(err, limit.ErrRateLimited) {
			t.Errorf("%s = %v; want refused by the limiter its host already spent", u, err)
		}
	}
	if got, want := hostNames(tr.hosts[0]), []string{"[::1]", "a.test", "b.test", "c.test:8080"}; !slices.Equal(got, want) {
		t.Errorf("hosts %v, want %v", got, want)
	}
	for _, c := range []struct{ url, want string }{
		{"http://a.test:443/", "a.test:443"},
		{"https://a.test:80/", "a.test:80"},
		{"HTTPS://A.test:443/", "a.test"},
		{"http://a.test:/", "a.test"},
	} {
		if got := hostKey(httptestRequest(t, c.url)); got != c.want {
			t.Errorf("hostKey(%s) = %q, want %q", c.url, got, c.want)
		}
	}
	// A request whose URL names no host (a server's inbound request) is
	// keyed by its Host, with no scheme to tell the default port from.
	for _, c := range []struct {
		req  *http.Request
		want string
	}{
		{&http.Request{Host: "API.test:80"}, "api.test"},
		{&http.Request{URL: &url.URL{Path: "/x"}, Host: "api.test:443"}, "api.test"},
		{&http.Request{URL: &url.URL{Host: "b.test:8080"}, Host: "api.test"}, "b.test:8080"},
	} {
		if got := hostKey(c.req); got != c.want {
			t.Errorf("hostKey(%+v) = %q, want %q", c.req, got, c.want)
		}
	}
}

// hostNames lists the hosts with an entry, sorted.
func hostNames(s *hostSet) []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Sorted(maps.Keys(s.m))
}

// A full host map never drops a host whose limiter still holds permits out:
// a crawler over more hosts than WithMaxHosts, at one request a minute per host,
// must still be held to one a minute on each. Only limiters at rest — a
// bucket full again, a window empty — are dropped to make room.
func TestFullHostMapKeepsLimitersInUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := rtFunc(func(r *http.Request) (*http.Response, error) { calls.Add(1); return ok200(r) })
		tr := mustTransport(t, WithTransport(base), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{PerWindow: &limit.WindowOptions{Permits: 1, Window: headroom.Duration(time.Minute)}}, WithMaxHosts(4)))
		for round := range 3 {
			for h := range 6 {
				resp, err := get(t, tr, fmt.Sprintf("http://h%d.test/", h))
				switch {
				case round == 0 && err != nil:
					t.Fatalf("first request to h%d: %v", h, err)
				case round == 0:
					resp.Body.Close()
				case err == nil:
					resp.Body.Close()
					t.Errorf("round %d: h%d admitted a second request within its minute", round, h)
				}
			}
		}
		if n := calls.Load(); n != 6 {
			t.Errorf("the hosts saw %d requests, want 6", n)
		}
		time.Sleep(time.Minute) // every window passes: all six limiters are at rest
		for h := 6; h < 9; h++ {
			resp, err := get(t, tr, fmt.Sprintf("http://h%d.test/", h))
			if err != nil {
				t.Fatalf("h%d: %v", h, err)
			}
			resp.Body.Close()
		}
		if n := tr.hosts[0].len(); n > 4 {
			t.Errorf("%d hosts kept with every limiter at rest, want at most MaxHosts (4)", n)
		}
	})
}

// In an HTTP client a request gets its turn at its host's permits rather
// than fail: with the configuration of the package's own example, and with
// a window and a bulkhead in its place, 64 callers × 3 requests are all
// served, none refused. The rate shapes refuse at once by default, and the
// resilience layer retries each refusal after its RetryAfter, which names
// the caller's turn; a bulkhead cannot tell when a permit frees, so its
// callers wait in its queue.
func TestRequestsWaitTheirTurn(t *testing.T) {
	for _, c := range []struct {
		limiter string
		took    time.Duration
	}{
		{`{"permitsPerSecond": 50, "burst": 50}`, 2840 * time.Millisecond},          // 50 at once, then 50 a second
		{`{"permitsPerSecond": 50}`, 3820 * time.Millisecond},                       // 50 a second from the first
		{`{"perWindow": {"permits": 50, "window": "1s"}}`, 3020 * time.Millisecond}, // 50 a window
		{`{"concurrency": 4, "queueLimit": 1000}`, 480 * time.Millisecond},          // 4 at a time, 10 ms each
	} {
		t.Run(c.limiter, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				cfg, err := ParseConfig([]byte(`{"resilience": {}, "limiters": {"default": ` + c.limiter + `}, "rateLimit": "default", "quotaGuard": {"disabled": true}}`))
				if err != nil {
					t.Fatal(err)
				}
				opts, err := cfg.Options()
				if err != nil {
					t.Fatal(err)
				}
				slow := rtFunc(func(r *http.Request) (*http.Response, error) {
					time.Sleep(10 * time.Millisecond)
					return ok200(r)
				})
				tr := mustTransport(t, append(opts, WithTransport(slow))...)
				start := time.Now()
				var failed atomic.Int32
				var wg sync.WaitGroup
				for range 64 {
					wg.Go(func() {
						for range 3 {
							resp, err := get(t, tr, "http://a.test/")
							if err != nil {
								failed.Add(1)
								continue
							}
							resp.Body.Close()
						}
					})
				}
				wg.Wait()
				if n := failed.Load(); n > 0 {
					t.Errorf("%d of 192 requests failed", n)
				}
				if took := time.Since(start); took > c.took+10*time.Millisecond {
					t.Errorf("192 requests took %v, want about %v", took, c.took)
				}
			})
		})
	}
}

// The adaptive rate layer queues requests, as every limiter layer does: a
// request that finds no unit free waits its turn instead of being refused.
func TestAdaptiveRateRequestsWaitTheirTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithoutQuotaGuard(),
			WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{InitialUnitsPerMinute: 60, MinUnitsPerMinute: 60, MaxUnitsPerMinute: 60}}))
		start := time.Now()
		for range 3 {
			resp, err := get(t, tr, "http://a.test/")
			if err != nil {
				t.Fatalf("refused instead of waiting: %v", err)
			}
			resp.Body.Close()
		}
		if took := time.Since(start); took != 2*time.Second {
			t.Fatalf("three requests at one a second took %v, want 2s", took)
		}
	})
}
