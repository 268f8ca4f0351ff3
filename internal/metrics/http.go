package metrics

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"

	"github.com/headroom-go/headroom/telemetry"
)

// httpBuckets are the bucket boundaries the semantic conventions advise
// for http.client.request.duration, in seconds.
var httpBuckets = []float64{0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10}

// HTTPClient records the semantic convention's http.client.request.duration
// for each attempt that reached the transport. A nil *HTTPClient records
// nothing.
type HTTPClient struct {
	duration metric.Float64Histogram
	series   *HostSeries
}

// NewHTTPClient registers the duration histogram with mp (nil: the global
// meter provider), its hosts labelled within series. It never fails: on
// error it reports through otel.Handle and returns nil.
func NewHTTPClient(mp metric.MeterProvider, series *HostSeries) *HTTPClient {
	in := newInstruments(mp)
	h := in.histogram(telemetry.HTTPClientRequestDurationName, "Duration of HTTP client requests.", httpBuckets)
	if in.err != nil {
		otel.Handle(fmt.Errorf("headroom/telemetry: http client: %w", in.err))
		return nil
	}
	return &HTTPClient{duration: h, series: series}
}

// Request records one attempt of req that took d and ended with resp or
// err.
func (c *HTTPClient) Request(ctx context.Context, req *http.Request, resp *http.Response, err error, d time.Duration) {
	if c == nil {
		return
	}
	kvs := make([]attribute.KeyValue, 0, 8)
	kvs = append(kvs, semconv.HTTPRequestMethodKey.String(method(req.Method)), semconv.URLScheme(scheme(req)))
	kvs = append(kvs, c.series.Labels(req.URL.Hostname(), port(req))...)
	if resp != nil && resp.ProtoMajor > 0 {
		kvs = append(kvs, semconv.NetworkProtocolVersion(protocolVersion(resp)))
	}
	switch {
	case err != nil:
		kvs = append(kvs, semconv.ErrorTypeKey.String(errorType(err)))
	case resp.StatusCode >= 400:
		kvs = append(kvs, semconv.HTTPResponseStatusCodeKey.Int(resp.StatusCode),
			semconv.ErrorTypeKey.String(strconv.Itoa(resp.StatusCode)))
	default:
		kvs = append(kvs, semconv.HTTPResponseStatusCodeKey.Int(resp.StatusCode))
	}
	c.duration.Record(ctx, d.Seconds(), metric.WithAttributes(kvs...))
}

// method is the request's method as the conventions name it: one of the
// methods RFC 9110 and RFC 5789 define, else _OTHER, so that a client
// sending made-up methods cannot grow the series without bound.
func method(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
		http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace:
		return m
	case "":
		return http.MethodGet
	}
	return "_OTHER"
}

// scheme is the request URL's scheme, http when it has none.
func scheme(req *http.Request) string {
	if req.URL.Scheme == "" {
		return "http"
	}
	return req.URL.Scheme
}

// protocolVersion is the response's HTTP version as the conventions write
// it: "1.1", "2", "3".
func protocolVersion(resp *http.Response) string {
	switch {
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 1:
		return "1.1"
	case resp.ProtoMajor == 1 && resp.ProtoMinor == 0:
		return "1.0"
	case resp.ProtoMinor == 0:
		return strconv.Itoa(resp.ProtoMajor)
	}
	return strconv.Itoa(resp.ProtoMajor) + "." + strconv.Itoa(resp.ProtoMinor)
}

// port is the request's port, or the scheme's default.
func port(req *http.Request) int {
	if p, err := strconv.Atoi(req.URL.Port()); err == nil {
		return p
	}
	if req.URL.Scheme == "https" {
		return 443
	}
	return 80
}

// errorType names a failed attempt's error with a low-cardinality value:
// timeout, cancelled, or the error's Go type.
func errorType(err error) string {
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "cancelled"
	}
	return fmt.Sprintf("%T", err)
}
