package sim

import (
	"testing"
	"time"

	"github.com/headroom-go/headroom/limit/quota"
)

func handleAll(t *testing.T, s Server, quota int, reqs ...arrival) []response {
	t.Helper()
	return feed(t, s, []quotaStep{{0, quota}}, reqs)
}

func TestPublishNoneSaysNothing(t *testing.T) {
	out := handleAll(t, Server{Kind: kindFixedWindow, Window: 10 * time.Second, Publish: publishNone}, 1, arrival{0, 1}, arrival{time.Second, 1})
	if out[1].Status != 429 || out[1].RetryAfter != 0 || out[0].Header != nil || out[1].Header != nil {
		t.Errorf("none: %+v %+v, want a bare 429", out[0], out[1])
	}
}

func TestPublishRetryAfterOnlyOnA429(t *testing.T) {
	out := handleAll(t, Server{Kind: kindFixedWindow, Window: 10 * time.Second, Publish: publishRetryAfter}, 1,
		arrival{0, 1}, arrival{1500 * time.Millisecond, 1})
	if out[0].Header != nil {
		t.Errorf("200: %v, want no headers", out[0].Header)
	}
	// 8.5 s to the window's end, rounded up.
	if out[1].RetryAfter != 9*time.Second || len(out[1].Header) != 1 || out[1].Header.Get("Retry-After") != "9" {
		t.Errorf("429: %v %v, want Retry-After 9 s and nothing else", out[1].RetryAfter, out[1].Header)
	}
}

// TestPublishDraft6Rounding: the policy's window and the reset are whole
// seconds rounded up (express-rate-limit: Math.ceil), and a reset of 0 is
// left out.
func TestPublishDraft6Rounding(t *testing.T) {
	out := handleAll(t, Server{Kind: kindFixedWindow, Window: 1500 * time.Millisecond, Aligned: true, Publish: publishDraft6}, 4,
		arrival{100 * time.Millisecond, 3}, arrival{1499 * time.Millisecond, 2})
	h := out[0].Header
	if h.Get("RateLimit-Policy") != "4;w=2" || h.Get("RateLimit-Limit") != "4" || h.Get("RateLimit-Remaining") != "1" || h.Get("RateLimit-Reset") != "2" {
		t.Errorf("200: %v; want policy 4;w=2 (1.5 s up), reset 2 (1.4 s up)", h)
	}
	h = out[1].Header
	if out[1].Status != 429 || h.Get("RateLimit-Reset") != "1" || h.Get("Retry-After") != "1" || h.Get("RateLimit-Remaining") != "1" {
		t.Errorf("429 1 ms before the end: %d %v; want reset and Retry-After 1", out[1].Status, h)
	}
	// A token bucket that is full has nothing to reset: no field.
	out = handleAll(t, Server{Kind: kindTokenBucket, Window: time.Second, Publish: publishDraft6}, 5, arrival{0, 0})
	if _, ok := out[0].Header["Ratelimit-Reset"]; ok {
		t.Errorf("full bucket: %v, want no RateLimit-Reset", out[0].Header)
	}
}

// TestPublishXRateLimitEpoch: the reset is epoch seconds rounded down or
// up (EpochCeil), and the Date is the moment the response leaves, rounded
// down to the second as an HTTP-date is.
func TestPublishXRateLimitEpoch(t *testing.T) {
	at := 1300 * time.Millisecond // the window ends at 11.3 s
	for _, c := range []struct {
		ceil bool
		want string
	}{{false, "1767225611"}, {true, "1767225612"}} {
		out := handleAll(t, Server{Kind: kindFixedWindow, Window: 10 * time.Second, Publish: publishXRateLimit, EpochCeil: c.ceil}, 5, arrival{at, 2})
		h := out[0].Header
		if h.Get("X-RateLimit-Reset") != c.want || h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Remaining") != "3" ||
			h.Get("Date") != "Thu, 01 Jan 2026 00:00:01 GMT" {
			t.Errorf("ceil %v: %v, want reset %s", c.ceil, h, c.want)
		}
	}
}

// TestPublishDraft3AsSharePoint: nothing below 80% of the quota; from it
// the bare trio with no window; on a 429 the reset equals Retry-After.
func TestPublishDraft3AsSharePoint(t *testing.T) {
	out := handleAll(t, Server{Kind: kindTokenBucket, Window: 10 * time.Second, Publish: publishDraft3}, 10,
		arrival{0, 7}, arrival{0, 1}, arrival{0, 3})
	if out[0].Header != nil {
		t.Errorf("70%% used: %v, want nothing", out[0].Header)
	}
	if h := out[1].Header; h.Get("RateLimit-Limit") != "10" || h.Get("RateLimit-Remaining") != "2" || h.Get("RateLimit-Reset") != "8" || h.Get("RateLimit-Policy") != "" {
		t.Errorf("80%% used: %v", h)
	}
	if h := out[2].Header; out[2].Status != 429 || h.Get("RateLimit-Reset") != "1" || h.Get("Retry-After") != "1" {
		t.Errorf("429: %v", h)
	}
}

// TestPublishAfterTheServersDelay: the headers of a request nginx holds
// are written when the response leaves: relative values count from then,
// and the Date is then.
func TestPublishAfterTheServersDelay(t *testing.T) {
	s := Server{Kind: kindLeakyBucket, Window: time.Second, Burst: 5, Publish: publishXRateLimit}
	out := handleAll(t, s, 1, arrival{0, 1}, arrival{0, 1}, arrival{0, 1})
	if out[2].Delay != 2*time.Second || out[2].Header.Get("Date") != "Thu, 01 Jan 2026 00:00:02 GMT" {
		t.Errorf("held 2 s: delay %v, %v", out[2].Delay, out[2].Header)
	}
	s.Publish = publishDraft6
	out = handleAll(t, s, 1, arrival{0, 1}, arrival{0, 1}, arrival{0, 1})
	// Excess 2 leaks away at 2 s, when the response leaves: no reset left.
	if got := out[2].Header.Get("RateLimit-Reset"); got != "" {
		t.Errorf("reset %q, want none: the excess is gone when the response leaves", got)
	}
}

// TestPublishEnvoy: Envoy's local rate limit writes the bucket's depth, the
// units left and, once none is left, one unit's refill time in whole
// seconds rounded down; its 429 carries the three and no Retry-After.
func TestPublishEnvoy(t *testing.T) {
	// 5 units a second: a unit refills in 200 ms, which Envoy writes as 0.
	out := handleAll(t, Server{Kind: kindTokenBucket, Window: time.Second, Burst: 2, Publish: publishEnvoy}, 5,
		arrival{0, 1}, arrival{0, 1}, arrival{0, 1})
	for i, want := range []struct {
		status           int
		remaining, reset string
	}{{200, "1", "0"}, {200, "0", "0"}, {429, "0", "0"}} {
		h := out[i].Header
		if out[i].Status != want.status || h.Get("X-RateLimit-Limit") != "2" || h.Get("X-RateLimit-Remaining") != want.remaining ||
			h.Get("X-RateLimit-Reset") != want.reset || h.Get("Retry-After") != "" || h.Get("Date") != "" || out[i].RetryAfter != 0 {
			t.Errorf("request %d: %d %v (Retry-After %v); want %d, limit 2, remaining %s, reset %s, no Retry-After",
				i, out[i].Status, h, out[i].RetryAfter, want.status, want.remaining, want.reset)
		}
	}
	// A unit every 2.5 s: 2 once the bucket is empty.
	out = handleAll(t, Server{Kind: kindTokenBucket, Window: 10 * time.Second, Publish: publishEnvoy}, 4, arrival{0, 4})
	if h := out[0].Header; h.Get("X-RateLimit-Limit") != "4" || h.Get("X-RateLimit-Remaining") != "0" || h.Get("X-RateLimit-Reset") != "2" {
		t.Errorf("slow bucket: %v, want limit 4, remaining 0, reset 2", h)
	}
	// Another kind: the quota, and its reset in delta seconds rounded down.
	out = handleAll(t, Server{Kind: kindFixedWindow, Window: 10 * time.Second, Publish: publishEnvoy}, 5,
		arrival{1300 * time.Millisecond, 5}, arrival{1400 * time.Millisecond, 1})
	if h := out[1].Header; out[1].Status != 429 || h.Get("X-RateLimit-Limit") != "5" || h.Get("X-RateLimit-Reset") != "9" || h.Get("Retry-After") != "" {
		t.Errorf("fixed window: %d %v, want a 429 with limit 5 and reset 9 (9.9 s down)", out[1].Status, h)
	}
}

// TestEnvoyAsTheGuardReadsIt: limit/quota reads the envoy dialect's reset as
// delta seconds, not as an instant in 1970.
func TestEnvoyAsTheGuardReadsIt(t *testing.T) {
	out := handleAll(t, Server{Kind: kindTokenBucket, Window: 10 * time.Second, Publish: publishEnvoy}, 4, arrival{0, 4})
	now := epoch.Add(time.Minute)
	q, ok := quota.Parse(out[0].Header, now)
	if !ok || q.Limit != 4 || q.Remaining != 0 || !q.Reset.Equal(now.Add(2*time.Second)) {
		t.Errorf("%v: parsed %+v (%v); want limit 4, remaining 0, reset 2 s after now", out[0].Header, q, ok)
	}
}
