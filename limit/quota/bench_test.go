package quota

import (
	"net/http"
	"strconv"
	"testing"
	"time"
)

// typical returns a response's headers: the usual ones plus a dialect's.
func typical(kv ...string) http.Header {
	h := http.Header{}
	for _, k := range []string{"Content-Type", "Content-Length", "Server", "Cache-Control", "Vary", "X-Request-Id", "Strict-Transport-Security"} {
		h.Set(k, "x")
	}
	h.Set("Date", t0.Format(http.TimeFormat))
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

var benchDialects = []struct {
	name string
	h    http.Header
}{
	{"GitHub", typical("x-ratelimit-limit", "5000", "x-ratelimit-remaining", "4999", "x-ratelimit-used", "1",
		"x-ratelimit-reset", strconv.FormatInt(t0.Add(time.Hour).Unix(), 10), "x-ratelimit-resource", "core")},
	{"X", typical("x-rate-limit-limit", "900", "x-rate-limit-remaining", "899", "x-rate-limit-reset", strconv.FormatInt(t0.Add(15*time.Minute).Unix(), 10))},
	{"Discord", typical("X-RateLimit-Limit", "5", "X-RateLimit-Remaining", "4", "X-RateLimit-Reset", "1756212000.123",
		"X-RateLimit-Reset-After", "64.57", "X-RateLimit-Bucket", "abcd1234")},
	{"OpenAI", typical("x-ratelimit-limit-requests", "60", "x-ratelimit-limit-tokens", "150000",
		"x-ratelimit-remaining-requests", "59", "x-ratelimit-remaining-tokens", "149984",
		"x-ratelimit-reset-requests", "1s", "x-ratelimit-reset-tokens", "6m0s")},
	{"Anthropic", typical("anthropic-ratelimit-requests-limit", "50", "anthropic-ratelimit-requests-remaining", "49",
		"anthropic-ratelimit-requests-reset", "2025-08-21T12:40:59Z",
		"anthropic-ratelimit-input-tokens-limit", "40000", "anthropic-ratelimit-input-tokens-remaining", "39000",
		"anthropic-ratelimit-input-tokens-reset", "2025-08-21T12:40:30Z",
		"anthropic-ratelimit-output-tokens-limit", "8000", "anthropic-ratelimit-output-tokens-remaining", "8000",
		"anthropic-ratelimit-output-tokens-reset", "2025-08-21T12:40:01Z")},
	{"Shopify", typical("X-Shopify-Shop-Api-Call-Limit", "32/40")},
	{"IETF-08", typical("RateLimit-Policy", `"burst";q=100;w=60,"daily";q=1000;w=86400`, "RateLimit", `"burst";r=50;t=30,"daily";r=950;t=80000`)},
	{"IETF-07", typical("RateLimit", "limit=100, remaining=50, reset=5", "RateLimit-Policy", "100;w=10")},
	{"IETF-06", typical("RateLimit-Limit", "10", "RateLimit-Remaining", "5", "RateLimit-Reset", "7", "RateLimit-Policy", "10;w=1, 50;w=60")},
	{"SharePoint-03", typical("RateLimit-Limit", "1200, 1200;w=60", "RateLimit-Remaining", "120", "RateLimit-Reset", "5")},
	{"None", typical()},
}

func BenchmarkParse(b *testing.B) {
	for _, d := range benchDialects {
		b.Run(d.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				Parse(d.h, t0)
			}
		})
	}
}

func BenchmarkParseRetryAfter(b *testing.B) {
	for _, c := range []struct{ name, v string }{
		{"Seconds", "120"}, {"Fraction", "2.0"}, {"IMF-fixdate", t0.Add(time.Minute).Format(http.TimeFormat)},
		{"RFC850", t0.Add(time.Minute).Format(time.RFC850)},
	} {
		h := typical("Retry-After", c.v)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				ParseRetryAfter(h, t0)
			}
		})
	}
}

// BenchmarkTryAcquireAt is the guard's decision before an attempt on a
// known key with allowance to spare (the common path) and on one inside its
// reserve.
func BenchmarkTryAcquireAt(b *testing.B) {
	g, _ := New(Options{})
	for i := range 1000 {
		g.Observe("host-"+strconv.Itoa(i), Response{Status: 200, Header: xh(1<<30, 1<<31, time.Hour)}, t0)
	}
	g.Observe("api.example.com", Response{Status: 200, Header: xh(1<<30, 1<<31, time.Hour)}, t0)
	g.Observe("exhausted.example.com", Response{Status: 200, Header: xh(0, 100, time.Hour)}, t0)
	b.Run("Admitted", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := g.TryAcquireAt("api.example.com", t0, 1); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("SilentKey", func(b *testing.B) {
		// A key whose first answer published nothing: admitted freely.
		g.TryAcquireAt("silent.example.com", t0, 1)
		g.Observe("silent.example.com", Response{Status: http.StatusOK}, t0)
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := g.TryAcquireAt("silent.example.com", t0, 1); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("Refused", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if ok, _ := g.TryAcquireAt("exhausted.example.com", t0, 1); ok {
				b.Fatal("admitted")
			}
		}
	})
	b.Run("AdmittedParallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				g.TryAcquireAt("api.example.com", t0, 1)
			}
		})
	})
}

func BenchmarkObserve(b *testing.B) {
	g, _ := New(Options{})
	h := benchDialects[0].h
	b.ReportAllocs()
	for b.Loop() {
		g.Observe("api.github.com", Response{Status: 200, Header: h}, t0)
	}
}

// TestAllocs holds the speed budget's allocation half: parsing a typical
// response at most 2 allocations (none, in fact), the decision none.
func TestAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip()
	}
	for _, d := range benchDialects {
		if a := testing.AllocsPerRun(100, func() { Parse(d.h, t0) }); a > 0 {
			t.Errorf("Parse %s: %v allocs", d.name, a)
		}
	}
	g, _ := New(Options{})
	g.Observe("h", Response{Status: 200, Header: xh(1<<30, 1<<31, time.Hour)}, t0)
	g.Observe("x", Response{Status: 200, Header: xh(0, 100, time.Hour)}, t0)
	if a := testing.AllocsPerRun(100, func() { g.TryAcquireAt("h", t0, 1) }); a != 0 {
		t.Errorf("TryAcquireAt granting: %v allocs", a)
	}
	if a := testing.AllocsPerRun(100, func() { g.TryAcquireAt("x", t0, 1) }); a != 0 {
		t.Errorf("TryAcquireAt refusing: %v allocs", a)
	}
	if a := testing.AllocsPerRun(100, func() { g.Observe("h", Response{Status: 200, Header: benchDialects[0].h}, t0) }); a != 0 {
		t.Errorf("Observe: %v allocs", a)
	}
}
