package httpx

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/telemetry"
)

// The guard's refusals were visible only as the runner's self-imposed
// attempts, which the limiters' own refusals also raise: the guard now
// counts them by key and reason, and reports what it knows of each key.
func TestGuardRefusalsAndStateAreExported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "30")
	}))
	defer srv.Close()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	c, err := NewClient(WithMeterProvider(mp), WithQuotaGuard(quota.Options{QueueLimit: new(0)}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := c.Get(srv.URL); !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("second request: %v, want the guard's refusal", err)
	}
	host := func() string { u, _ := url.Parse(srv.URL); return u.Host }()

	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, dp := range d.DataPoints {
					k, _ := dp.Attributes.Value(telemetry.AttrQuotaKey)
					why, _ := dp.Attributes.Value(telemetry.AttrReason)
					got[m.Name+" "+k.AsString()+" "+why.AsString()] = float64(dp.Value)
				}
			case metricdata.Gauge[float64]:
				for _, dp := range d.DataPoints {
					k, _ := dp.Attributes.Value(telemetry.AttrQuotaKey)
					if m.Name == telemetry.QuotaResetName {
						got[m.Name+" "+k.AsString()] = float64(int(dp.Value + 0.5)) // whole seconds
						continue
					}
					got[m.Name+" "+k.AsString()] = dp.Value
				}
			}
		}
	}
	want := map[string]float64{
		telemetry.QuotaRefusalsName + " " + host + " " + metrics.ReasonReserve: 1,
		telemetry.QuotaLimitName + " " + host:                                  100,
		telemetry.QuotaRemainingName + " " + host:                              0,
		telemetry.QuotaResetName + " " + host:                                  30,
		telemetry.QuotaBlockedName + " " + host:                                0,
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			delete(got, k)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guard metrics (-want +got):\n%s", diff)
	}
}
