package acceptance

import (
	"net/http"
	"strconv"

	"github.com/headroom-go/headroom/httpx"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/resilience"
)

// A Client is one of the clients a cell compares: an *http.Client and what
// releases it.
type Client struct {
	Name  string
	HTTP  *http.Client
	Close func()
}

// ClientMaker makes a fresh client for one run. New builds it over base,
// the transport that puts its attempts on the wire (the harness passes one
// that counts them); the client sends every attempt through base and
// nothing else.
type ClientMaker struct {
	Name string
	New  func(base http.RoundTripper) (*Client, error)
}

// requestCost is the cost estimator both clients' limiters read: the
// request's CostHeader, 1 when absent or unreadable.
func requestCost(r *http.Request) int {
	if n, err := strconv.Atoi(r.Header.Get(CostHeader)); err == nil && n > 0 {
		return n
	}
	return 1
}

// Headroom is the README's recommended client: the resilience runner with
// the HTTP preset, the adaptive rate limiter (CUBIC) per host inside it,
// costs read from CostHeader, and the default quota guard.
var Headroom = ClientMaker{Name: "headroom", New: func(base http.RoundTripper) (*Client, error) {
	policy, err := resilience.HTTP(resilience.Options{})
	if err != nil {
		return nil, err
	}
	t, err := httpx.NewTransport(
		httpx.WithTransport(base),
		httpx.WithResilience(policy),
		httpx.WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{Controller: "cubic"}}, httpx.WithCost(requestCost)),
	)
	if err != nil {
		return nil, err
	}
	return &Client{Name: "headroom", HTTP: &http.Client{Transport: t}, Close: func() { t.Close() }}, nil
}}
