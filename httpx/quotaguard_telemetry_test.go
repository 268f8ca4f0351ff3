package httpx

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/telemetry"
)

// The guard's refusals were visible only as the runner's self-imposed
// attempts, which the limiters' own refusals also raise: the guard now
// counts them by key and reason, and reports what it knows of each key.
func TestGuardRefusalsAndStateAreExported(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-RateLimit-Limit", "100")
		w.Header().Set("X-RateLimit-Remaining", "0")
		w.Header().Set("X-RateLimit-Reset", "30")
	}))
	defer srv.Close()
	r, mp := metricstest.New(t)
	c, err := NewClient(WithMeterProvider(mp), WithQuotaGuard(quota.Options{QueueLimit: new(0)}))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := c.Get(srv.URL); !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("second request: %v, want the guard's refusal", err)
	}
	host := func() string { u, _ := url.Parse(srv.URL); return u.Host }()

	got := map[string]float64{}
	for _, p := range metricstest.Collect(t, r) {
		k := p.Name + " " + p.Attr(telemetry.AttrQuotaKey)
		switch {
		case p.Kind == "monotonic sum" || p.Kind == "sum":
			got[k+" "+p.Attr(telemetry.AttrReason)] = p.Value
		case p.Name == telemetry.QuotaResetName:
			got[k] = float64(int(p.Value + 0.5)) // whole seconds
		case p.Kind == "gauge" && p.Attr(telemetry.AttrQuotaKey) != "":
			got[k] = p.Value
		}
	}
	want := map[string]float64{
		telemetry.QuotaRefusalsName + " " + host + " " + telemetry.ReasonReserve: 1,
		telemetry.QuotaLimitName + " " + host:                                    100,
		telemetry.QuotaRemainingName + " " + host:                                0,
		telemetry.QuotaResetName + " " + host:                                    30,
		telemetry.QuotaBlockedName + " " + host:                                  0,
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			delete(got, k)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("guard metrics (-want +got):\n%s", diff)
	}
}
