package status_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
	"github.com/headroom-go/headroom/telemetry/status"
)

func TestStatusPage(t *testing.T) {
	lim, err := limit.Concurrency(4, limit.WithName("status-test-db"), limit.WithQueueLimit(10))
	if err != nil {
		t.Fatal(err)
	}
	lease, err := lim.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release()
	g, err := quota.New(quota.Options{Name: "status-test-guard"})
	if err != nil {
		t.Fatal(err)
	}
	g.Observe("api.test", quota.Response{Status: 200, Header: http.Header{
		"X-Ratelimit-Limit": {"100"}, "X-Ratelimit-Remaining": {"42"}, "X-Ratelimit-Reset": {"30"}}}, time.Now())
	br, err := resilience.NewBreaker(resilience.BreakerOptions{Name: "status-test-breaker"})
	if err != nil {
		t.Fatal(err)
	}
	defer keep(br)

	srv := httptest.NewServer(status.Handler())
	defer srv.Close()

	resp, err := http.Get(srv.URL + "?format=json")
	if err != nil {
		t.Fatal(err)
	}
	var s metrics.Status
	err = json.NewDecoder(resp.Body).Decode(&s)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, l := range s.Limiters {
		if l.Name == "status-test-db" {
			found = true
			if l.Limit == nil || *l.Limit != 4 || l.InUse == nil || *l.InUse != 1 || l.Available == nil || *l.Available != 3 || l.QueueLimit != 10 || l.Acquired != 1 {
				t.Errorf("limiter %+v: want limit 4, 1 in use, 3 available, queue limit 10, 1 acquired", l)
			}
		}
	}
	if !found {
		t.Errorf("limiter status-test-db not on the page: %+v", s.Limiters)
	}
	found = false
	for _, gs := range s.Guards {
		for _, k := range gs.Keys {
			if gs.Name == "status-test-guard" && k.Key == "api.test" {
				found = true
				if !k.Known || k.Limit != 100 || k.Remaining != 42 {
					t.Errorf("guard key %+v: want limit 100, remaining 42", k)
				}
			}
		}
	}
	if !found {
		t.Errorf("guard key api.test not on the page: %+v", s.Guards)
	}
	found = false
	for _, b := range s.Breakers {
		if b.Name == "status-test-breaker" {
			found = b.State == "closed"
		}
	}
	if !found {
		t.Errorf("breaker status-test-breaker not closed on the page: %+v", s.Breakers)
	}

	resp, err = http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var body strings.Builder
	_, _ = bufCopy(&body, resp)
	for _, want := range []string{"<table>", "status-test-db", "status-test-guard", "api.test", "status-test-breaker"} {
		if !strings.Contains(body.String(), want) {
			t.Errorf("HTML page lacks %q", want)
		}
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Errorf("Content-Type %q, want text/html", ct)
	}

	resp, err = http.Post(srv.URL, "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d, want 405", resp.StatusCode)
	}
}
