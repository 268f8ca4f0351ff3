package acceptance

import (
	"net/http"
	"testing"
	"testing/synctest"
	"time"
)

// TestEnvoyStyleBucket: the fields Envoy's local rate limit writes, a 429
// without Retry-After, and a bucket that refills at its fill rate.
func TestEnvoyStyleBucket(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := &envoyServer{bucket: newEnvoyBucket(Limit{Units: 1, Window: 2 * time.Second, Burst: 2}, time.Now())}
		for i, want := range []struct {
			status           int
			remaining, reset string
		}{{200, "1", "0"}, {200, "0", "2"}, {429, "0", "2"}} {
			rec := ask(s, "")
			h := rec.Header()
			if rec.Code != want.status || h.Get("X-RateLimit-Limit") != "2" || h.Get("X-RateLimit-Remaining") != want.remaining ||
				h.Get("X-RateLimit-Reset") != want.reset || h.Get("Retry-After") != "" {
				t.Errorf("request %d: %d %v; want %d, limit 2, remaining %s, reset %s, no Retry-After",
					i, rec.Code, h, want.status, want.remaining, want.reset)
			}
			if rec.Code == http.StatusTooManyRequests && (rec.Body.String() != "local_rate_limited" || h.Get("X-Envoy-Ratelimited") != "true") {
				t.Errorf("429: body %q, %v; want Envoy's local reply", rec.Body.String(), h)
			}
		}
		// Half a token a second: one is back after 2 s, not before.
		time.Sleep(1900 * time.Millisecond)
		if rec := ask(s, ""); rec.Code != http.StatusTooManyRequests {
			t.Errorf("after 1.9 s: %d, want 429", rec.Code)
		}
		time.Sleep(100 * time.Millisecond)
		if rec := ask(s, ""); rec.Code != http.StatusOK || rec.Header().Get("X-RateLimit-Remaining") != "0" {
			t.Errorf("after 2 s: %d %v, want 200 with none left", rec.Code, rec.Header())
		}
	})
	// At a token a second or more, Envoy's reset is always 0.
	b := newEnvoyBucket(Limit{Units: 50, Window: time.Second, Burst: 1}, time.Unix(0, 0))
	if !b.consume(time.Unix(0, 0)) || b.resetSeconds() != 0 {
		t.Errorf("50 a second, empty: reset %d, want 0", b.resetSeconds())
	}
}
