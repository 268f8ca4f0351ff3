package httpx

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"go.opentelemetry.io/otel/attribute"
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
		Method, Address, Error string
		Port, Status           int64
		Count                  uint64
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
			v(semconv.ErrorTypeKey).AsString(), v(semconv.ServerPortKey).AsInt64(), v(semconv.HTTPResponseStatusCodeKey).AsInt64(), p.Count})
	}
	want := []series{{"GET", u.Hostname(), "", int64(port), 200, 2}, {"GET", u.Hostname(), "404", int64(port), 404, 1}}
	less := func(a, b series) bool { return a.Status < b.Status }
	if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
		t.Errorf("http.client.request.duration series (-want +got):\n%s", diff)
	}
}
