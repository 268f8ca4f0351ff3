package acceptance

import (
	"net/http"

	"github.com/hashicorp/go-retryablehttp"
)

// RetryableHTTP is the peer the headroom client is measured against:
// hashicorp/go-retryablehttp with RetryMax 3 (at most four attempts a call)
// and its defaults otherwise — DefaultRetryPolicy (retry connection errors,
// 429 and 5xx other than 501), DefaultBackoff (1 s × 2ⁿ capped at 30 s, or
// the server's Retry-After on a 429 or 503) — with its logger off, used
// through StandardClient. It has no limiter of its own: it learns nothing
// from a 2xx and sends as fast as its callers ask.
//
// When every attempt of a call is refused it returns an error ("giving up
// after 4 attempt(s)"), not the last response: such a call counts as
// failed either way.
var RetryableHTTP = ClientMaker{Name: "retryablehttp", New: func(base http.RoundTripper) (*Client, error) {
	c := retryablehttp.NewClient()
	c.RetryMax = 3
	c.Logger = nil
	// The pooled client's own transport is replaced, not wrapped: every
	// attempt must go through base, where the harness counts it.
	c.HTTPClient.Transport = base
	return &Client{Name: "retryablehttp", HTTP: c.StandardClient(), Close: func() {}}, nil
}}
