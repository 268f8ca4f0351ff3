package httpx

import (
	"github.com/headroom-go/headroom/telemetry"
	"log/slog"
	"net/http"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
)

// durationLayer times each attempt that reaches the base transport, as the
// semantic convention's http.client.request.duration: from the request
// to the response's headers, or to the error.
type durationLayer struct {
	next   http.RoundTripper
	m      *metrics.HTTPClient
	events *metrics.Events // WithLogger's: the throttles servers answer
}

func (l *durationLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := l.next.RoundTrip(req)
	l.m.Request(req.Context(), req, resp, err, time.Since(start))
	if l.events != nil && err == nil {
		if ok, d := throttled(resp); ok {
			l.events.Log(req.Context(), slog.LevelInfo, "throttled by the server", req.URL.Host,
				slog.String(telemetry.AttrServerAddress, req.URL.Hostname()), slog.Int("http.response.status_code", resp.StatusCode),
				slog.Duration("retry_after", d))
		}
	}
	return resp, err
}
