package acceptance

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// EnvoyLocal is a server that limits as Envoy's local rate limit filter
// does (envoy.filters.http.local_ratelimit, with a token_bucket of
// max_tokens l.Burst, refilled with l.Units tokens per l.Window, and
// enable_x_ratelimit_headers DRAFT_VERSION_03). There is no Envoy among
// Debian's packages, so this is ours, written from Envoy's source
// (local_ratelimit.cc, local_ratelimit_impl.h, token_bucket_impl.cc): a
// token bucket of fractional tokens, full at the start, refilled at the
// fill rate whenever a request comes; a request takes one token when a
// whole one is there, and is refused otherwise, taking none. Each request
// is one token, whatever its CostHeader.
//
// Headers (PublishEnvoy), on every response, the 429 too:
// X-RateLimit-Limit (max_tokens), X-RateLimit-Remaining (the whole tokens
// left after this request), X-RateLimit-Reset — 0 while a whole token is
// left, else the time one token takes to refill, ⌈1000 / fill rate⌉
// milliseconds divided by 1,000 in integers: delta seconds rounded down,
// 0 at any rate of a token a second or more. A refusal is Envoy's local
// reply, 429 "local_rate_limited" with x-envoy-ratelimited: true, and no
// Retry-After.
//
// Allowance: the bucket at once, then the rate: Burst + rate × d.
func EnvoyLocal(l Limit) ServerSpec {
	return ServerSpec{
		Name: "envoy-style token bucket", Kind: TokenBucket, Limit: l, Headers: PublishEnvoy,
		Start: func(context.Context) (*Server, error) {
			if err := checkLimit("envoy-style token bucket", l); err != nil {
				return nil, err
			}
			if l.Burst < 1 {
				return nil, fmt.Errorf("envoy-style token bucket: limit %s: burst %d, want 1 or more: Envoy's max_tokens", l, l.Burst)
			}
			b := &envoyServer{bucket: newEnvoyBucket(l, time.Now())}
			return serveLoopback(b, nil)
		},
		Allowance: func(d time.Duration) float64 {
			return float64(l.Burst) + l.PerSecond()*d.Seconds()
		},
	}
}

// envoyBucket is Envoy's AtomicTokenBucketImpl as the local rate limit
// uses it, with the time explicit: not safe for concurrent use.
type envoyBucket struct {
	max      float64
	fillRate float64 // tokens a second
	tokens   float64
	last     time.Time
}

func newEnvoyBucket(l Limit, now time.Time) *envoyBucket {
	return &envoyBucket{max: float64(l.Burst), fillRate: l.PerSecond(), tokens: float64(l.Burst), last: now}
}

// consume refills the bucket to now and takes a token if a whole one is
// there.
func (b *envoyBucket) consume(now time.Time) bool {
	if d := now.Sub(b.last); d > 0 {
		b.tokens = min(b.max, b.tokens+d.Seconds()*b.fillRate)
		b.last = now
	}
	if math.Floor(b.tokens) < 1 {
		return false
	}
	b.tokens--
	return true
}

// resetSeconds is X-RateLimit-Reset: 0 while a whole token is left, else
// one token's refill time in milliseconds, rounded up, divided by 1,000 in
// integers.
func (b *envoyBucket) resetSeconds() int64 {
	if b.tokens >= 1 {
		return 0
	}
	return int64(math.Ceil(1000/b.fillRate)) / 1000
}

// envoyServer serves okHandler behind one envoyBucket.
type envoyServer struct {
	mu     sync.Mutex
	bucket *envoyBucket
}

func (s *envoyServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	ok := s.bucket.consume(time.Now())
	limit, remaining, reset := s.bucket.max, math.Floor(s.bucket.tokens), s.bucket.resetSeconds()
	s.mu.Unlock()
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.FormatInt(int64(limit), 10))
	h.Set("X-RateLimit-Remaining", strconv.FormatInt(int64(remaining), 10))
	h.Set("X-RateLimit-Reset", strconv.FormatInt(reset, 10))
	if ok {
		okHandler.ServeHTTP(w, r)
		return
	}
	h.Set("X-Envoy-Ratelimited", "true")
	h.Set("Content-Type", "text/plain")
	w.WriteHeader(http.StatusTooManyRequests)
	w.Write([]byte("local_rate_limited"))
}
