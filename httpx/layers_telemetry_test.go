package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// Two limiter layers for one host carried one limiter label and merged or
// summed as one: each is now its own series, told apart by its layer and,
// within a layer, by its name.
func TestLayersForOneHostAreSeparateSeries(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	c, err := NewClient(WithMeterProvider(mp), WithoutQuotaGuard(),
		WithRateLimit(limit.Options{PermitsPerSecond: 100, Burst: 10}),
		WithRateLimit(limit.Options{PermitsPerSecond: 100, Burst: 10}),
		WithAdaptiveRate(adaptive.RateConfig{}))
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

	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != telemetry.LeasesName {
				continue
			}
			for _, dp := range m.Data.(metricdata.Sum[int64]).DataPoints {
				o, _ := dp.Attributes.Value(telemetry.AttrOutcome)
				if o.AsString() != metrics.OutcomeAcquired {
					continue
				}
				name, _ := dp.Attributes.Value(telemetry.AttrLimiter)
				layer, _ := dp.Attributes.Value(telemetry.AttrLayer)
				got[layer.AsString()+" "+name.AsString()] += dp.Value
			}
		}
	}
	want := map[string]int64{
		"rate_limit " + host:        1,
		"rate_limit " + host + "#2": 1,
		"adaptive_rate " + host:     1,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("acquired leases by layer and limiter (-want +got):\n%s", diff)
	}
}
