package httpx

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/telemetry"
)

// fakeShared is a shared quota of left units, recording what it is told.
type fakeShared struct {
	left     atomic.Int64
	acquires []string
	observed []int
}

func (f *fakeShared) Acquire(_ context.Context, key string, cost int) error {
	f.acquires = append(f.acquires, key)
	if f.left.Add(-int64(cost)) < 0 {
		f.left.Add(int64(cost))
		return &limit.RateLimitedError{Limiter: "shared", RetryAfter: time.Second, Reason: telemetry.ReasonNoPermit}
	}
	return nil
}

func (f *fakeShared) Observe(_ context.Context, key string, r quota.Response, _ time.Time) error {
	f.observed = append(f.observed, r.Status)
	return nil
}

// The quota guard layer reserves each attempt's units from the shared quota
// after its own guard admits it, hands it every response, and sends nothing
// the shared quota refuses.
func TestSharedQuotaConsultedByTheGuard(t *testing.T) {
	shared := &fakeShared{}
	shared.left.Store(2)
	var sent atomic.Int32
	tr := mustTransport(t, WithSharedQuota(shared), WithTransport(rtFunc(func(r *http.Request) (*http.Response, error) {
		sent.Add(1)
		return ok200(r)
	})))
	for range 2 {
		resp, err := get(t, tr, "http://API.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	_, err := get(t, tr, "http://api.test/")
	if !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("third request: %v; want the shared quota's refusal", err)
	}
	if sent.Load() != 2 {
		t.Fatalf("%d requests sent, want 2: a refused one must not leave", sent.Load())
	}
	if d := cmp.Diff([]string{"api.test", "api.test", "api.test"}, shared.acquires); d != "" {
		t.Errorf("acquires by key (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]int{200, 200}, shared.observed); d != "" {
		t.Errorf("observed statuses (-want +got):\n%s", d)
	}
}
