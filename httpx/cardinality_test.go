package httpx

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// One client calling hundreds or thousands of hosts made about 31 series
// a host, and past the SDK's cardinality limit of 2,000 series an
// instrument folded its hosts into otel.metric.overflow, every label lost.
// Now the hosts past WithMaxHostSeries fold into one series that says so,
// and the series stay within the bound docs/telemetry.md gives.
func TestSeriesStayBoundedAtAnyNumberOfHosts(t *testing.T) {
	for _, tc := range []struct {
		hosts, maxHosts int // maxHosts 0: WithMaxHosts' default
	}{{450, 0}, {450, 10_000}, {5_000, 0}, {5_000, 10_000}} {
		t.Run(fmt.Sprintf("%d hosts, WithMaxHosts %d", tc.hosts, tc.maxHosts), func(t *testing.T) {
			if testing.Short() && tc.hosts > 1000 {
				t.Skip("-short")
			}
			reader, mp := metricstest.New(t) // the SDK's default cardinality limit
			answer := func(r *http.Request) (*http.Response, error) {
				return respond(r, 200, "ok", nil, "X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "50", "X-RateLimit-Reset", "30"), nil
			}
			var lopts []LimiterOption
			if tc.maxHosts > 0 {
				lopts = append(lopts, WithMaxHosts(tc.maxHosts))
			}
			tr := mustTransport(t, WithTransport(rtFunc(answer)), WithMeterProvider(mp),
				WithRateLimit(limit.Options{PermitsPerSecond: 10}, lopts...))
			for i := range tc.hosts {
				resp, err := get(t, tr, fmt.Sprintf("http://h%d.test/", i))
				if err != nil {
					t.Fatalf("host %d: %v", i, err)
				}
				resp.Body.Close()
			}

			points := metricstest.Collect(t, reader)
			addresses := map[string]bool{}
			for _, p := range points {
				if _, over := p.AttrMap()["otel.metric.overflow"]; over {
					t.Fatalf("%s: an otel.metric.overflow series", p.Name)
				}
				if a := p.Attr(telemetry.AttrServerAddress); a != "" {
					addresses[a] = true
				}
			}
			// Per host of this client, from docs/telemetry.md's table: a
			// per_second limiter 19 (12 leases and permits, the wait, the
			// rate, in_use, available, two queue gauges, throttles), the
			// quota guard's key 8 (4 gauges, 4 refusal reasons), and the
			// HTTP duration one per method and status answered (here 1).
			const perHost = 19 + 8 + 1
			bound := (metrics.DefaultMaxHostSeries + 1) * perHost
			if len(points) > bound {
				t.Errorf("%d series, over the bound of %d", len(points), bound)
			}
			if want := metrics.DefaultMaxHostSeries + 1; len(addresses) != want {
				t.Errorf("%d server.address values, want %d (the bound and %q)", len(addresses), want, telemetry.OtherHosts)
			}
			if !addresses[telemetry.OtherHosts] {
				t.Errorf("no %q series for the hosts past the bound", telemetry.OtherHosts)
			}
			// The folded hosts' requests are counted in their one series,
			// those of limiters since dropped (past WithMaxHosts) too.
			acquired := metricstest.Sum(points, func(p metricstest.Point) string {
				if p.Name == telemetry.LeasesName && p.Attr(telemetry.AttrOutcome) == metrics.OutcomeAcquired {
					return p.Attr(telemetry.AttrServerAddress)
				}
				return ""
			})
			if got, want := acquired[telemetry.OtherHosts], float64(tc.hosts-metrics.DefaultMaxHostSeries); got != want {
				t.Errorf("%v leases acquired in the folded series, want %v", got, want)
			}
			if tc.maxHosts >= tc.hosts { // no limiter dropped: every host counted
				total := 0.0
				for a, n := range acquired {
					if a != "" {
						total += n
					}
				}
				if total != float64(tc.hosts) {
					t.Errorf("%v leases acquired in all series, want %d", total, tc.hosts)
				}
			}
			t.Logf("%d series, %d per labelled host at most, bound %d", len(points), perHost, bound)
		})
	}
}
