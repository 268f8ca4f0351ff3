package httpx_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/headroom-go/headroom/httpx"
	"github.com/headroom-go/headroom/limit"
)

// Requests a person waits for go first: the priority comes from a header
// the application sets, or from the request's context
// (limit.WithPriority) when there is none.
func ExampleWithPriority() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "ok")
	}))
	defer srv.Close()

	client, err := httpx.NewClient(
		httpx.WithRateLimit(limit.Options{PermitsPerSecond: 50, QueueLimit: new(100)}),
		httpx.WithPriority(func(r *http.Request) limit.Priority {
			if p, err := limit.ParsePriority(r.Header.Get("X-Priority")); err == nil {
				return p
			}
			return limit.PriorityFrom(r.Context())
		}),
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("X-Priority", "background")
	resp, err := client.Do(req)
	if err != nil {
		fmt.Println(err)
		return
	}
	resp.Body.Close()
	fmt.Println(resp.StatusCode)
	// Output:
	// 200
}
