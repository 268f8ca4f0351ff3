package httpx

import (
	"context"
	"net/http"
	"testing"
	"testing/synctest"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/limit"
)

// servedOrder sends one request per priority through a client over a
// bulkhead of one permit that the test holds, each queued before the next
// is sent, and returns the order the base transport saw them in, by
// index. send makes the request of index i and priority p.
func servedOrder(t *testing.T, ps []limit.Priority, send func(i int, p limit.Priority) *http.Request, opts ...Option) []string {
	lim, err := limit.Concurrency(1, limit.WithQueueLimit(10))
	if err != nil {
		t.Fatal(err)
	}
	seen := make(chan string, len(ps))
	base := rtFunc(func(r *http.Request) (*http.Response, error) {
		seen <- r.Header.Get("X-Id")
		return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: r}, nil
	})
	client, err := NewClient(append([]Option{WithTransport(base), WithoutQuotaGuard(), WithLimiter(lim)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	held, err := lim.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, len(ps))
	for i, p := range ps {
		go func() {
			resp, err := client.Do(send(i, p))
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		synctest.Wait() // queued, in this order
	}
	held.Release()
	var order []string
	for range ps {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		order = append(order, <-seen)
	}
	return order
}

func request(ctx context.Context, t *testing.T, i int) *http.Request {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Id", string(rune('a'+i)))
	return req
}

var mixedLevels = []limit.Priority{limit.Background, limit.Background, limit.Critical, limit.Default}

func TestPriorityFromTheRequestContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		order := servedOrder(t, mixedLevels, func(i int, p limit.Priority) *http.Request {
			return request(limit.WithPriority(t.Context(), p), t, i)
		})
		if diff := cmp.Diff([]string{"c", "d", "a", "b"}, order); diff != "" {
			t.Fatalf("served order (-want +got):\n%s", diff)
		}
	})
}

func TestWithPriorityFunction(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fromHeader := func(r *http.Request) limit.Priority {
			p, err := limit.ParsePriority(r.Header.Get("X-Priority"))
			if err != nil {
				return limit.PriorityFrom(r.Context())
			}
			return p
		}
		order := servedOrder(t, mixedLevels, func(i int, p limit.Priority) *http.Request {
			req := request(t.Context(), t, i)
			req.Header.Set("X-Priority", p.String())
			return req
		}, WithPriority(fromHeader))
		if diff := cmp.Diff([]string{"c", "d", "a", "b"}, order); diff != "" {
			t.Fatalf("served order (-want +got):\n%s", diff)
		}
	})
}
