package httpx

import (
	"net/http"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
)

// durationLayer times each attempt that reaches the base transport, as the
// semantic convention's http.client.request.duration: from the request
// to the response's headers, or to the error.
type durationLayer struct {
	next http.RoundTripper
	m    *metrics.HTTPClient
}

func (l *durationLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	start := time.Now()
	resp, err := l.next.RoundTrip(req)
	l.m.Request(req.Context(), req, resp, err, time.Since(start))
	return resp, err
}
