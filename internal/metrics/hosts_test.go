package metrics

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/attribute"

	"github.com/headroom-go/headroom/telemetry"
)

func TestHostSeriesFoldsPastItsBound(t *testing.T) {
	h := NewHostSeries(2)
	label := func(addr string, port int) string {
		s := attribute.NewSet(h.Labels(addr, port)...)
		return s.Encoded(attribute.DefaultEncoder())
	}
	got := []string{label("a", 443), label("b", 80), label("c", 443), label("a", 443), label("a", 8443), label("b", 0)}
	want := []string{"server.address=a,server.port=443", "server.address=b,server.port=80",
		"server.address=_other", "server.address=a,server.port=443", "server.address=a,server.port=8443", "server.address=b"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("labels (-want +got):\n%s", diff)
	}
	if !Folded(h.Labels("d", 1)) || Folded(h.Labels("a", 443)) {
		t.Errorf("Folded: want true past the bound, false within it")
	}
}

func TestSplitPort(t *testing.T) {
	for key, want := range map[string]struct {
		addr string
		port int
	}{
		"api.example.com":      {"api.example.com", 0},
		"api.example.com:8443": {"api.example.com", 8443},
		"[::1]:8080":           {"::1", 8080},
		"10.0.0.1:99999":       {"10.0.0.1:99999", 0},
		"route:/v1/users":      {"route:/v1/users", 0},
		":80":                  {":80", 0},
	} {
		a, p := SplitPort(key)
		if a != want.addr || p != want.port {
			t.Errorf("SplitPort(%q) = %q, %d; want %q, %d", key, a, p, want.addr, want.port)
		}
	}
}

// The hosts past the bound count into one series, whatever their number;
// closing every one of them closes it, and grants counted by an engine
// stay counted once its limiter is gone.
func TestFoldedLimitersShareOneSeries(t *testing.T) {
	r, mp := newSDK(t)
	other := []attribute.KeyValue{attribute.String(telemetry.AttrServerAddress, telemetry.OtherHosts), attribute.String(telemetry.AttrLimiter, telemetry.OtherHosts)}
	var ls []*Limiter
	for i := range 50 {
		m := NewLimiter(mp, fmt.Sprintf("host%d", i), KindConcurrency, other...)
		m.Acquired()
		m.SetLimit(10) // not reported: limits do not add up
		m.SetQueueLimit(5)
		m.QueueAdd(2)
		granted := int64(i)
		m.CountGrants(func() int64 { return granted })
		ls = append(ls, m)
	}
	ls[0].Denied(telemetry.ReasonNoPermit)
	ls[0].Throttled()
	base := map[string]string{telemetry.AttrLimiter: telemetry.OtherHosts, telemetry.AttrLimiterKind: KindConcurrency, telemetry.AttrServerAddress: telemetry.OtherHosts}
	grants := float64(50 + 49*50/2)
	want := sorted(leases(base, grants, [len(reasons)]float64{1}), []point{
		{Name: telemetry.ThrottlesName, Unit: "{throttle}", Kind: "monotonic sum", Attrs: base, Value: 1},
	})
	if diff := cmp.Diff(want, collect(t, r)); diff != "" {
		t.Errorf("folded (-want +got):\n%s", diff)
	}
	for _, m := range ls[:49] {
		m.Close()
		m.Close() // idempotent: one handle leaves once
	}
	if diff := cmp.Diff(want, collect(t, r)); diff != "" {
		t.Errorf("after 49 of 50 closed (-want +got):\n%s", diff)
	}
	ls[49].Close()
	if got := collect(t, r); len(got) != 0 {
		t.Errorf("after the last closed: %d points, want none", len(got))
	}
}
