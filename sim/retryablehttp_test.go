package sim

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestRetryableHTTPRetries: go-retryablehttp's Client.Do with RetryMax 3,
// DefaultRetryPolicy and DefaultBackoff, attempt by attempt.
func TestRetryableHTTPRetries(t *testing.T) {
	now := 10 * time.Second
	ra := func(v string) http.Header { return http.Header{"Retry-After": {v}} }
	for _, c := range []struct {
		name    string
		attempt int
		resp    response
		wait    time.Duration
		again   bool
	}{
		{"first 429, Retry-After 7", 1, response{Status: 429, Header: ra("7")}, 7 * time.Second, true},
		{"a long Retry-After is honoured whole", 1, response{Status: 429, Header: ra("90")}, 90 * time.Second, true},
		{"no Retry-After: 1 s", 1, response{Status: 429}, time.Second, true},
		{"second: 2 s", 2, response{Status: 429}, 2 * time.Second, true},
		{"third: 4 s", 3, response{Status: 429}, 4 * time.Second, true},
		{"the fourth refused attempt gives up", 4, response{Status: 429, Header: ra("1")}, 0, false},
		{"a negative Retry-After is ignored", 2, response{Status: 429, Header: ra("-3")}, 2 * time.Second, true},
		{"so is one with a space", 2, response{Status: 429, Header: ra(" 3")}, 2 * time.Second, true},
		{"a date ahead", 1, response{Status: 429, Header: ra(epoch.Add(now + 5*time.Second).Format(time.RFC1123))}, 5 * time.Second, true},
		{"a date gone by: at once", 1, response{Status: 429, Header: ra(epoch.Format(time.RFC1123))}, 0, true},
		{"a 503 is retried too", 1, response{Status: 503, Header: ra("2")}, 2 * time.Second, true},
		{"a 501 is not", 1, response{Status: 501}, 0, false},
		{"nor a 404", 1, response{Status: 404}, 0, false},
	} {
		wait, again := retryablehttpRetry(c.attempt, &c.resp, now)
		if wait != c.wait || again != c.again {
			t.Errorf("%s: wait %v, again %v; want %v, %v", c.name, wait, again, c.wait, c.again)
		}
	}
}

// TestRetryableHTTPIsTheRetryHandler: the simulator's own retry handler (4
// attempts, Retry-After or 1, 2, 4 s) is go-retryablehttp's, so with no
// limiter the two modes meet the same requests with the same answers; with
// fewer attempts in the config the peer keeps its own four.
func TestRetryableHTTPIsTheRetryHandler(t *testing.T) {
	for _, p := range []string{publishRetryAfter, publishNone, publishEnvoy} {
		cfg := Config{Scenario: scenarioSteady, Duration: 3 * time.Minute, Quota: 50, NoSeries: true,
			Server: Server{Kind: kindFixedWindow, Window: time.Second, Publish: p}}
		a, err := Run(cfg, noLimiterMode())
		if err != nil {
			t.Fatal(err)
		}
		b, err := Run(cfg, retryablehttpMode())
		if err != nil {
			t.Fatal(err)
		}
		b.Mode = a.Mode
		if d := cmp.Diff(a, b); d != "" || a.GaveUp == 0 {
			t.Errorf("%s: no limiter and retryablehttp differ (-no limiter +retryablehttp), or nobody gave up:\n%s", p, d)
		}
		cfg.Attempts = 2
		c, err := Run(cfg, retryablehttpMode())
		if err != nil {
			t.Fatal(err)
		}
		c.Mode = a.Mode
		if d := cmp.Diff(a, c); d != "" {
			t.Errorf("%s: with Attempts 2 in the config, retryablehttp changed (-4 attempts +2):\n%s", p, d)
		}
	}
}
