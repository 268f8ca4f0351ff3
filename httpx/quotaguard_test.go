package httpx

import (
	"errors"
	"io"
	"net/http"
	"strconv"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
	"github.com/headroom-go/headroom/telemetry"
)

// exhausted answers with a published quota that has nothing left, for
// resetIn more.
func exhausted(resetIn time.Duration, calls *atomic.Int32) rtFunc {
	return func(r *http.Request) (*http.Response, error) {
		calls.Add(1)
		return respond(r, 200, "ok", nil, "X-RateLimit-Limit", "10", "X-RateLimit-Remaining", "0",
			"X-RateLimit-Reset-After", strconv.FormatFloat(resetIn.Seconds(), 'f', 3, 64)), nil
	}
}

// The guard is on by default, and keys hosts as the limiter layers do:
// case-insensitive, and the scheme's default port the same as none.
func TestQuotaGuardOnByDefault(t *testing.T) {
	var calls atomic.Int32
	tr := mustTransport(t, WithTransport(exhausted(time.Minute, &calls)))
	resp, err := get(t, tr, "http://a.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, u := range []string{"http://a.test/", "http://A.Test/", "http://a.test:80/"} {
		_, err = getWithin(t, tr, u, time.Second) // the guard holds a request up to its deadline
		var rl *limit.RateLimitedError
		if !errors.As(err, &rl) || rl.RetryAfter < 59*time.Second {
			t.Fatalf("%s with a.test's quota spent = %v, want refused until the reset", u, err)
		}
	}
	if calls.Load() != 1 {
		t.Errorf("the server saw %d requests, want 1", calls.Load())
	}
	if tr.guard == nil {
		t.Error("no guard")
	}

	off := mustTransport(t, WithTransport(exhausted(time.Minute, &calls)), WithoutQuotaGuard())
	for range 2 {
		resp, err := get(t, off, "http://a.test/")
		if err != nil {
			t.Fatalf("WithoutQuotaGuard: %v", err)
		}
		resp.Body.Close()
	}
}

// Inside the resilience layer a refusal waits for the reset and goes again;
// by default the guard holds the attempt instead. The second request goes
// at the reset, alone: its answer shows nothing came back (0 of 10), so the
// server gives units back gradually, 10 in the 4 s its resets span, and the
// third waits for one unit, 0.4 s. Fake time.
func TestQuotaGuardWaitsForReset(t *testing.T) {
	for _, queue := range []bool{false, true} {
		t.Run("queue="+strconv.FormatBool(queue), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var calls atomic.Int32
				tr, err := NewTransport(WithTransport(exhausted(4*time.Second, &calls)),
					WithResilience(policyOnly(resilience.HTTP(resilience.Options{NoBreaker: true, NoBudget: true}))),
					WithQuotaGuard(guardQueue(queue)))
				if err != nil {
					t.Fatal(err)
				}
				defer tr.Close()
				for i, want := range []time.Duration{0, 4 * time.Second, 400 * time.Millisecond} {
					start := time.Now()
					resp, err := get(t, tr, "http://a.test/")
					if err != nil {
						t.Fatal(err)
					}
					resp.Body.Close()
					if d := time.Since(start); d != want {
						t.Errorf("request %d took %v, want %v", i+1, d, want)
					}
				}
			})
		})
	}
}

// With an adaptive rate layer the guard does not refuse on its reserve: it
// hands the published quota to the request's adaptive rate limiter as a
// ceiling, and the limiter paces the requests.
func TestQuotaGuardCapsAdaptiveRate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		tr := mustTransport(t, WithTransport(exhausted(time.Minute, &calls)),
			WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{Controller: "cubic"}}))
		for range 2 {
			resp, err := get(t, tr, "http://a.test/")
			if err != nil {
				t.Fatalf("request under an adaptive rate layer refused: %v", err)
			}
			resp.Body.Close()
		}
		if calls.Load() != 2 {
			t.Fatalf("the server saw %d requests, want 2: the guard must not refuse", calls.Load())
		}
		rate, ok := tr.hosts[0].get(httptestRequest(t, "http://a.test/")).lim.(*limit.AdaptiveRateLimiter)
		if !ok {
			t.Fatal("no adaptive rate limiter for the host")
		}
		// X-RateLimit-Limit 10 with no published window: 10 a minute.
		if got := rate.State().PublishedLimit; got != 10 {
			t.Errorf("PublishedLimit() = %v, want 10 units a minute", got)
		}
		if got := rate.State().Rate; got > 0.98*10 {
			t.Errorf("Rate() = %v, above 98%% of the published 10 a minute", got)
		}
	})
}

func httptestRequest(t *testing.T, url string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// A panic below the guard must not keep the attempt's in-flight slot.
func TestPanicBelowGuardReleasesSlot(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls atomic.Int32
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			if calls.Add(1) == 1 {
				panic("boom")
			}
			return ok200(r)
		})
		tr := mustTransport(t, WithTransport(base), WithResilience(fastPolicy(resilience.Options{})),
			WithQuotaGuard(quota.Options{MaxInFlight: 1}))
		func() {
			defer func() { recover() }()
			get(t, tr, "http://a.test/")
		}()
		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatalf("request after a recovered panic = %v; the slot was never released", err)
		}
		resp.Body.Close()
	})
}

// An attempt the guard holds in its queue until the attempt's timeout never
// reached the dependency: a self-imposed refusal, which the breaker does
// not count.
func TestQuotaGuardQueueTimeoutIsSelfImposed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		br, err := resilience.NewBreaker(resilience.BreakerOptions{ConsecutiveFailures: 2, BreakDuration: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		release := make(chan struct{})
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			if r.Header.Get("Slow") != "" {
				<-release
			}
			return ok200(r)
		})
		tr := mustTransport(t, WithTransport(base),
			WithResilience(fastPolicy(resilience.Options{Retries: 1, Breaker: br, AttemptTimeout: headroom.Duration(100 * time.Millisecond), Timeout: headroom.Duration(time.Minute)})),
			WithQuotaGuard(quota.Options{MaxInFlight: 1, Name: "guard"}))
		slow := httptestRequest(t, "http://a.test/")
		slow.Header.Set("Slow", "1")
		go func() {
			if resp, err := tr.RoundTrip(slow); err == nil { // holds the only slot
				resp.Body.Close()
			}
		}()
		synctest.Wait()
		_, err = get(t, tr, "http://a.test/")
		rl, ok := errors.AsType[*limit.RateLimitedError](err)
		if !ok || rl.Limiter != "guard" || rl.Reason != telemetry.ReasonDeadline {
			t.Errorf("request held past its attempt timeout = %v; want a refusal by the guard for the deadline", err)
		}
		close(release)
		synctest.Wait()
		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatalf("request with the slot free = %v (breaker %v)", err, br.State())
		}
		resp.Body.Close()
	})
}

// A refusal by a layer of ours does not replace what the server last said:
// against a server that answers every attempt 503, the guard backs the host
// off between attempts, and when the attempts run out on the guard's
// refusal the caller still gets the server's 503, with its body.
func TestGuardRefusalKeepsLastResponse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var calls, closed atomic.Int32
		base := rtFunc(func(r *http.Request) (*http.Response, error) {
			calls.Add(1)
			return respond(r, http.StatusServiceUnavailable, "down", &closed), nil
		})
		tr := mustTransport(t, WithTransport(base), WithResilience(fastPolicy(resilience.Options{})), WithQuotaGuard(quota.Options{QueueLimit: new(0)}))
		resp, err := get(t, tr, "http://a.test/")
		if err != nil {
			t.Fatalf("RoundTrip = %v, want the server's last 503 (%d calls reached it)", err, calls.Load())
		}
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("status = %d, want 503", resp.StatusCode)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(body) != "down" {
			t.Errorf("body = %q, want %q", body, "down")
		}
		if n := calls.Load(); n < 1 || n >= 4 {
			t.Errorf("%d attempts reached the server, want between 1 and 3: the guard refused some", n)
		}
		if got, want := closed.Load(), calls.Load(); got != want {
			t.Errorf("%d of %d response bodies closed", got, want)
		}
	})
}

// guardQueue is a guard that holds attempts, its default, or refuses them
// at once.
func guardQueue(hold bool) quota.Options {
	if hold {
		return quota.Options{}
	}
	return quota.Options{QueueLimit: new(0)}
}
