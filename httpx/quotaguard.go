package httpx

import (
	"net/http"
	"time"

	"github.com/headroom-go/headroom/limit/quota"
)

// guardLayer is the quota guard: before an attempt it refuses (or, with
// quota.Options.Queue, holds) while the key's remaining allowance is inside
// the reserve and its reset is ahead, or while a Retry-After or a backoff
// blocks the key; after it, it reads what the response published.
type guardLayer struct {
	next http.RoundTripper
	g    *quota.Guard
}

func (l *guardLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	key := l.g.Key(req)
	slot, err := l.g.Enter(req.Context(), key)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	resp, err := l.next.RoundTrip(req)
	slot.Release()
	if err == nil {
		l.g.Observe(key, resp.StatusCode, resp.Header, time.Now())
	}
	return resp, err
}
