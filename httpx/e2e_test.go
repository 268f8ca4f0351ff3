package httpx

import (
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// quotaServer is an API with a hidden quota: limit requests in each fixed
// window of length window, counted from the server's start; a request over
// it is answered 429 with a Retry-After until the window ends. With publish
// it also publishes the quota (X-RateLimit-Limit, -Remaining, and
// -Reset-After in fractional seconds, as Discord does); without, it says
// nothing until it throttles.
type quotaServer struct {
	limit   int
	window  time.Duration
	publish bool
	start   time.Time

	mu        sync.Mutex
	ok, shed  map[int]int // by window
	okN, shdN atomic.Int64
}

func newQuotaServer(limit int, window time.Duration, publish bool) *quotaServer {
	return &quotaServer{limit: limit, window: window, publish: publish, start: time.Now(),
		ok: map[int]int{}, shed: map[int]int{}}
}

func (s *quotaServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	io.Copy(io.Discard, r.Body)
	now := time.Since(s.start)
	win := int(now / s.window)
	left := s.window*time.Duration(win+1) - now
	s.mu.Lock()
	used := s.ok[win]
	allowed := used < s.limit
	if allowed {
		s.ok[win]++
		used++
	} else {
		s.shed[win]++
	}
	s.mu.Unlock()
	h := w.Header()
	if s.publish {
		h.Set("X-RateLimit-Limit", strconv.Itoa(s.limit))
		h.Set("X-RateLimit-Remaining", strconv.Itoa(max(s.limit-used, 0)))
		h.Set("X-RateLimit-Reset-After", strconv.FormatFloat(left.Seconds(), 'f', 3, 64))
	}
	if !allowed {
		s.shdN.Add(1)
		h.Set("Retry-After", strconv.Itoa(int(math.Ceil(left.Seconds()))))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	s.okN.Add(1)
	w.Write([]byte("ok"))
}

// windows returns the accepted and shed counts of windows [from, to).
func (s *quotaServer) windows(from, to int) (ok, shed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for w := from; w < to; w++ {
		ok += s.ok[w]
		shed += s.shed[w]
	}
	return ok, shed
}

// inMemory is a transport that answers each request with h after latency,
// in the caller's goroutine: a server on the clock of a synctest bubble,
// where the latency is what moves the clock on for callers that do not
// wait otherwise.
func inMemory(h http.Handler, latency time.Duration) http.RoundTripper {
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		t := time.NewTimer(latency)
		defer t.Stop()
		select {
		case <-r.Context().Done():
			return nil, r.Context().Err()
		case <-t.C:
		}
		in := *r // as a server reads it: a body even when none was sent
		if in.Body == nil {
			in.Body = http.NoBody
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, &in)
		resp := rec.Result()
		resp.Request = r
		return resp, nil
	})
}

// drive sends GETs from workers goroutines until the server's clock reaches
// the end of window until, and returns how many calls failed.
func drive(t *testing.T, client *http.Client, url string, workers int, stop time.Time) (failed int64) {
	t.Helper()
	var wg sync.WaitGroup
	var fails atomic.Int64
	for range workers {
		wg.Go(func() {
			for time.Now().Before(stop) {
				ctx, cancel := context.WithDeadline(context.Background(), stop.Add(2*time.Second))
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
				resp, err := client.Do(req)
				if err != nil {
					fails.Add(1)
				} else {
					io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				cancel()
			}
		})
	}
	wg.Wait()
	return fails.Load()
}

// A server that publishes its quota: the guarded client, driven well above
// the quota, has at most 1% of its requests throttled and uses at least 95%
// of the quota.
func TestEndToEndPublishedQuota(t *testing.T) {
	synctest.Test(t, testEndToEndPublishedQuota)
}

func testEndToEndPublishedQuota(t *testing.T) {
	const (
		limitN  = 100
		window  = time.Second
		windows = 3 // measured; the run covers one more
		workers = 8
	)
	srv := newQuotaServer(limitN, window, true)
	client, err := NewClient(WithTransport(inMemory(srv, time.Millisecond)),
		WithResilience(policyOnly(resilience.HTTP(resilience.Options{Retries: 10}))))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Transport.(*Transport).Close()

	// Run windows 0 to `windows` (inclusive) and measure 1..windows: window
	// 0 is the one the client starts blind in.
	stop := srv.start.Add(window * (windows + 1))
	failed := drive(t, client, "http://api.test/", workers, stop)
	ok, shed := srv.windows(1, windows+1)
	okAll, shedAll := srv.okN.Load(), srv.shdN.Load()

	sent := okAll + shedAll
	throttled := float64(shedAll) / float64(sent)
	used := float64(ok) / float64(limitN*windows)
	t.Logf("server: %d requests, %d throttled (%.2f%%); windows 1-%d: %d accepted of %d (%.1f%% of the quota), %d throttled; client: %d calls failed",
		sent, shedAll, 100*throttled, windows, ok, limitN*windows, 100*used, shed, failed)
	if throttled > 0.01 {
		t.Errorf("%.2f%% of requests throttled, want at most 1%%", 100*throttled)
	}
	if used < 0.95 {
		t.Errorf("used %.1f%% of the quota, want at least 95%%", 100*used)
	}
}

// A server that publishes nothing until it throttles (429 with
// Retry-After): the adaptive rate layer, starting at twice the hidden quota
// and driven far above it, keeps throttled requests at or below 10% of
// those sent, where the same load without it is mostly throttled.
func TestEndToEndAdaptiveRate(t *testing.T) {
	synctest.Test(t, testEndToEndAdaptiveRate)
}

func testEndToEndAdaptiveRate(t *testing.T) {
	const (
		limitN  = 50 // 3,000 a minute
		window  = time.Second
		workers = 8
		run     = 4 * window
	)
	srv := newQuotaServer(limitN, window, false)
	client, err := NewClient(WithTransport(inMemory(srv, time.Millisecond)), WithoutQuotaGuard(),
		WithResilience(policyOnly(resilience.HTTP(resilience.Options{Retries: 10}))),
		WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{
			InitialUnitsPerMinute: 6000, // twice the quota
			MinUnitsPerMinute:     600,
			MaxUnitsPerMinute:     12000,
			BurstTime:             headroom.Duration(100 * time.Millisecond),
			DecreaseCooldown:      headroom.Duration(time.Second),
		}}))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Transport.(*Transport).Close()
	failed := drive(t, client, "http://api.test/", workers, srv.start.Add(run))
	ok, shed := srv.okN.Load(), srv.shdN.Load()
	throttled := float64(shed) / float64(ok+shed)
	t.Logf("adaptive: %d requests, %d throttled (%.1f%%), %d accepted (%.0f%% of the quota over %v); %d calls failed",
		ok+shed, shed, 100*throttled, ok, 100*float64(ok)/float64(limitN*int(run/window)), run, failed)
	if throttled > 0.10 {
		t.Errorf("%.1f%% of requests throttled, want at most 10%%", 100*throttled)
	}

	// The same load without a limiter, for one window: mostly throttled.
	bare := newQuotaServer(limitN, window, false)
	plain, err := NewClient(WithTransport(inMemory(bare, time.Millisecond)), WithoutQuotaGuard())
	if err != nil {
		t.Fatal(err)
	}
	drive(t, plain, "http://api.test/", workers, bare.start.Add(window/2))
	bok, bshed := bare.okN.Load(), bare.shdN.Load()
	t.Logf("no limiter: %d requests, %d throttled (%.1f%%)", bok+bshed, bshed, 100*float64(bshed)/float64(bok+bshed))
}
