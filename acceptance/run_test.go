package acceptance

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// hammer is a client with no limiter and no retries: it sends each call
// once, as soon as its caller asks. Against a server it takes every unit
// the instant the server would give it, so it reaches the allowance.
var hammer = ClientMaker{Name: "hammer", New: func(base http.RoundTripper) (*Client, error) {
	return &Client{Name: "hammer", HTTP: &http.Client{Transport: base}, Close: func() {}}, nil
}}

// runAlone runs one client against a fresh server of spec for d.
func runAlone(t *testing.T, spec ServerSpec, maker ClientMaker, callers int, d time.Duration) Result {
	t.Helper()
	c := Cell{Name: spec.Name, Server: spec, Callers: callers, Duration: d, Costs: CostOne, Seed: 1}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	r := &run{maker: maker, cell: c, callTimeout: DefaultCallTimeout, failurePause: -1}
	defer r.close()
	if err := r.prepare(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := r.drive(context.Background(), time.Now()); err != nil {
		t.Fatal(err)
	}
	return r.result()
}

// TestAllowanceIsReached checks each in-process server's Allowance against
// a client that hammers it: the hammer gets the allowance, to within the
// moments it loses between a unit coming free and its next request, and
// never more. It checks the harness's counts on the way: with no retries,
// every finished call is one attempt, and every throttled attempt a call
// that failed with 429.
func TestAllowanceIsReached(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: hammers servers for about 15 s")
	}
	const d = 2500 * time.Millisecond
	l := Limit{Units: 50, Window: time.Second}
	for _, spec := range []ServerSpec{
		OwnSlidingLog(l, PublishDraft6),
		HTTPRate(l, PublishXRateLimit),
		Ulule(l),
		Tollbooth(l),
		Tollbooth(Limit{Units: 20, Window: 10 * time.Second, Burst: 7}),
		HalvingLog(l, PublishDraft6, time.Second),
		OutageLog(l, PublishNone, time.Second, time.Second),
	} {
		t.Run(spec.Name+" "+spec.Limit.String(), func(t *testing.T) {
			r := runAlone(t, spec, hammer, 1, d)
			if lo := 0.98*r.Allowance - 2; float64(r.Units) < lo || float64(r.Units) > r.Allowance+1 {
				t.Errorf("the hammer had %d units accepted, allowance %.1f", r.Units, r.Allowance)
			}
			finished := int64(r.Succeeded + r.Failed)
			if r.Attempts < finished || r.Attempts > finished+1 {
				t.Errorf("%d attempts for %d finished calls of one attempt each", r.Attempts, finished)
			}
			refused := int64(r.Failures["status 429"] + r.Failures["status 503"])
			if r.Throttled < refused || r.Throttled > refused+1 {
				t.Errorf("%d throttled attempts, %d calls refused", r.Throttled, refused)
			}
			if r.P95 < r.P50 || r.P50 <= 0 {
				t.Errorf("p50 %s, p95 %s", r.P50, r.P95)
			}
		})
	}
}
