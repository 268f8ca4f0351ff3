package httpx

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/headroom-go/headroom/telemetry"
)

// Each attempt that reaches the wire is timed as the semantic convention's
// http.client.request.duration, with its attribute names.
func TestClientRecordsRequestDuration(t *testing.T) {
	codes := []int{200, 404, 200}
	var n int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(codes[n%len(codes)])
		n++
	}))
	defer srv.Close()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	defer mp.Shutdown(context.Background())
	c, err := NewClient(WithMeterProvider(mp), WithoutQuotaGuard())
	if err != nil {
		t.Fatal(err)
	}
	for range codes {
		resp, err := c.Get(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	u, _ := url.Parse(srv.URL)
	port, _ := strconv.Atoi(u.Port())

	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	type series struct {
		Method, Address, Error string
		Port, Status           int64
		Count                  uint64
	}
	var got []series
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name != telemetry.HTTPClientRequestDurationName {
				continue
			}
			if m.Unit != "s" {
				t.Errorf("unit %q, want s", m.Unit)
			}
			for _, dp := range m.Data.(metricdata.Histogram[float64]).DataPoints {
				v := func(k string) attribute.Value { x, _ := dp.Attributes.Value(attribute.Key(k)); return x }
				got = append(got, series{v(string(semconv.HTTPRequestMethodKey)).AsString(), v(string(semconv.ServerAddressKey)).AsString(),
					v(string(semconv.ErrorTypeKey)).AsString(), v(string(semconv.ServerPortKey)).AsInt64(), v(string(semconv.HTTPResponseStatusCodeKey)).AsInt64(), dp.Count})
			}
		}
	}
	want := []series{{"GET", u.Hostname(), "", int64(port), 200, 2}, {"GET", u.Hostname(), "404", int64(port), 404, 1}}
	less := func(a, b series) bool { return a.Status < b.Status }
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("http.client.request.duration series (-want +got):\n%s", diff)
	}
}
