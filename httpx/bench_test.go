package httpx

import (
	"net/http"
	"testing"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
)

// benchBase is a bare transport: it answers every request with a new 200
// response, with rate-limit headers as a typical API sends, and does nothing
// else. The layers' overhead is each benchmark's time less BenchmarkBare's.
func benchBase() http.RoundTripper {
	h := http.Header{
		"Content-Type":          {"application/json"},
		"X-Ratelimit-Limit":     {"5000"},
		"X-Ratelimit-Remaining": {"4999"},
		"X-Ratelimit-Reset":     {"1700000000"},
	}
	return rtFunc(func(r *http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Status: "200 OK", Header: h, Body: http.NoBody, Request: r}, nil
	})
}

func benchRT(b *testing.B, rt http.RoundTripper) {
	req, _ := http.NewRequest(http.MethodGet, "http://api.test/v1/items", nil)
	b.ReportAllocs()
	for b.Loop() {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}

func benchTransport(b *testing.B, opts ...Option) {
	tr, err := NewTransport(append([]Option{WithTransport(benchBase())}, opts...)...)
	if err != nil {
		b.Fatal(err)
	}
	defer tr.Close()
	benchRT(b, tr)
}

func BenchmarkBare(b *testing.B) { benchRT(b, benchBase()) }

func BenchmarkResilience(b *testing.B) {
	benchTransport(b, WithoutQuotaGuard(), WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))))
}

func BenchmarkQuotaGuard(b *testing.B) { benchTransport(b) }

func BenchmarkRateLimitPerHost(b *testing.B) {
	benchTransport(b, WithoutQuotaGuard(), WithRateLimit(limit.Options{PermitsPerSecond: 1e9}))
}

func BenchmarkConcurrencyPerHost(b *testing.B) {
	benchTransport(b, WithoutQuotaGuard(), WithRateLimit(limit.Options{Concurrency: 1000}))
}

func BenchmarkAdaptiveRate(b *testing.B) {
	benchTransport(b, WithoutQuotaGuard(), WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{
		InitialUnitsPerMinute: 1e9, MinUnitsPerMinute: 1e9, MaxUnitsPerMinute: 1e9}}))
}

// The whole stack: resilience, a per-host rate limit and the default quota
// guard.
func BenchmarkFullStack(b *testing.B) {
	benchTransport(b, WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))), WithRateLimit(limit.Options{PermitsPerSecond: 1e9}))
}
