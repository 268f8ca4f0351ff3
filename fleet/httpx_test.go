package fleet

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/headroom-go/headroom/httpx"
	"github.com/headroom-go/headroom/limit"
)

// Two HTTP clients — two processes, as far as the quota knows — share one
// published quota through WithSharedQuota: together they send no more than
// the server allows, where each alone would spend the remaining it read.
func TestTwoClientsShareAPublishedQuota(t *testing.T) {
	c, prefix := testRedis(t)
	const quota = 20
	var used, throttled atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := used.Add(1)
		left := max(quota-n, 0)
		w.Header().Set("RateLimit-Limit", strconv.Itoa(quota))
		w.Header().Set("RateLimit-Remaining", strconv.FormatInt(left, 10))
		w.Header().Set("RateLimit-Reset", "3600") // no reset within the test
		if n > quota {
			throttled.Add(1)
			w.WriteHeader(http.StatusTooManyRequests)
		}
	}))
	defer srv.Close()

	clients := make([]*http.Client, 2)
	for i := range clients {
		shared, err := NewSharedQuota(c, nil, Options{Name: "api", Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		tr, err := httpx.NewTransport(httpx.WithSharedQuota(shared))
		if err != nil {
			t.Fatal(err)
		}
		defer tr.Close()
		clients[i] = &http.Client{Transport: tr}
	}
	ok, refused := 0, 0
	for i := range 2 * quota {
		// A deadline shorter than the wait for the reset: the guards refuse
		// at once rather than hold the request.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := clients[i%2].Do(req)
		cancel()
		switch {
		case errors.Is(err, limit.ErrRateLimited):
			refused++
		case err != nil:
			t.Fatal(err)
		default:
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				ok++
			}
		}
	}
	if throttled.Load() != 0 || ok != quota || refused != quota {
		t.Fatalf("%d accepted, %d refused before sending, %d throttled by the server; want %d, %d, 0",
			ok, refused, throttled.Load(), quota, quota)
	}
}
