package httpx

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// Two limiter layers for one host carried one limiter label and merged or
// summed as one: each is now its own series, told apart by its kind and,
// within a kind, by its name.
func TestLayersForOneHostAreSeparateSeries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	r, mp := metricstest.New(t)
	c, err := NewClient(WithMeterProvider(mp), WithoutQuotaGuard(),
		WithRateLimit(limit.Options{PermitsPerSecond: 100, Burst: 10}),
		WithRateLimit(limit.Options{PermitsPerSecond: 100, Burst: 10}),
		WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{}}))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Transport.(*Transport).Close()
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	host := func() string { u, _ := url.Parse(srv.URL); return u.Host }()

	got := map[string]int64{}
	for _, p := range metricstest.Collect(t, r) {
		if p.Name != telemetry.LeasesName || p.Attr(telemetry.AttrOutcome) != metrics.OutcomeAcquired {
			continue
		}
		got[p.Attr(telemetry.AttrLayer)+" "+p.Attr(telemetry.AttrLimiterKind)+" "+p.Attr(telemetry.AttrLimiter)] += int64(p.Value)
	}
	want := map[string]int64{
		"rate_limit per_second " + host:        1,
		"rate_limit per_second " + host + "#2": 1,
		"rate_limit adaptive_rate " + host:     1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("acquired leases by layer and limiter (-want +got):\n%s", diff)
	}
}
