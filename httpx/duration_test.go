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
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/headroom-go/headroom/internal/metricstest"
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
	r, mp := metricstest.New(t)
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

	type series struct {
		Method, Address, Error, Scheme, Protocol string
		Port, Status                             int64
		Count                                    uint64
	}
	var got []series
	for _, p := range metricstest.Collect(t, r) {
		if p.Name != telemetry.HTTPClientRequestDurationName {
			continue
		}
		if p.Unit != "s" || p.Kind != "histogram" {
			t.Errorf("unit %q, kind %s; want s, a histogram", p.Unit, p.Kind)
		}
		v := func(k attribute.Key) attribute.Value { x, _ := p.Attrs.Value(k); return x }
		got = append(got, series{v(semconv.HTTPRequestMethodKey).AsString(), v(semconv.ServerAddressKey).AsString(),
			v(semconv.ErrorTypeKey).AsString(), v(semconv.URLSchemeKey).AsString(), v(semconv.NetworkProtocolVersionKey).AsString(),
			v(semconv.ServerPortKey).AsInt64(), v(semconv.HTTPResponseStatusCodeKey).AsInt64(), p.Count})
	}
	want := []series{{"GET", u.Hostname(), "", "http", "1.1", int64(port), 200, 2}, {"GET", u.Hostname(), "404", "http", "1.1", int64(port), 404, 1}}
	less := func(a, b series) bool { return a.Status < b.Status }
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("http.client.request.duration series (-want +got):\n%s", diff)
	}
}

// Beside otelhttp's transport, which records the same metric, the client's
// own can be left out, so that no attempt is counted twice.
func TestWithoutRequestDuration(t *testing.T) {
	r, mp := metricstest.New(t)
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithMeterProvider(mp), WithoutQuotaGuard(), WithoutRequestDuration())
	resp, err := get(t, tr, "http://api.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	for _, p := range metricstest.Collect(t, r) {
		if p.Name == telemetry.HTTPClientRequestDurationName {
			t.Errorf("%s recorded with WithoutRequestDuration", p.Name)
		}
	}
}

// The instrumentation scope carries the module's version: in this
// module's own tests, the main module's.
func TestScopeHasAVersion(t *testing.T) {
	r, mp := metricstest.New(t)
	tr := mustTransport(t, WithTransport(rtFunc(ok200)), WithMeterProvider(mp), WithoutQuotaGuard())
	resp, err := get(t, tr, "http://api.test/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var rm metricdata.ResourceMetrics
	if err := r.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name == telemetry.ScopeName && sm.Scope.Version == "" {
			t.Errorf("scope %s has no version", sm.Scope.Name)
		}
	}
}
