package fleet

import (
	"context"
	"errors"
	"net"
	"strconv"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/telemetry"
)

// Every call to Redis is timed, every failed one counted, and every request
// the failure policy decides counted, under the names telemetry declares.
func TestTelemetryRecordsRedisCalls(t *testing.T) {
	p := startPrivateRedis(t)
	r, mp := metricstest.New(t)
	lim, err := PerSecond(p.client(t), 100, 0, Options{Name: "otel", MeterProvider: mp, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	lim.Acquire(ctx)
	lim.Acquire(ctx)
	p.stop()
	for range 4 { // three reach the dead server and open the circuit; the fourth does not
		lim.Acquire(ctx)
	}
	got := points(t, r, nil)
	want := map[string]float64{
		telemetry.FleetRedisDurationName + " count": 5,
		telemetry.FleetRedisErrorsName:              3,
		telemetry.FleetFallbacksName:                4,
	}
	for name, n := range want {
		if got[name] != n {
			t.Errorf("%s = %v, want %v", name, got[name], n)
		}
	}
	// Every call carries the address of the node that served it.
	host, port, _ := net.SplitHostPort(p.addr)
	atNode := points(t, r, func(set attribute.Set) bool {
		h, _ := set.Value(metrics.AttrServerAddress)
		p, _ := set.Value(metrics.AttrServerPort)
		return h.AsString() == host && strconv.Itoa(int(p.AsInt64())) == port
	})
	if n := atNode[telemetry.FleetRedisDurationName+" count"]; n != 5 {
		t.Errorf("calls that carry the node's address %s: %v, want all 5", p.addr, n)
	}
}

// A shared limiter records what limit's limiters record, under the same
// names and with its own kind: leases granted and refused (by reason),
// their permits, throttles reported on its leases, and its rate. The
// failure policy's share records its own, marked fail_open.
func TestTelemetryCountsLeasesAsLimitsLimitersDo(t *testing.T) {
	c, prefix := testRedis(t)
	r, mp := metricstest.New(t)
	lim, err := PerSecond(c, 1, 3, Options{Name: "grants", Prefix: prefix, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	one, err1 := lim.Acquire(ctx)
	two, err2 := lim.AcquireN(ctx, 2)
	if err1 != nil || err2 != nil {
		t.Fatal(err1, err2)
	}
	if _, err := lim.Acquire(ctx); !errors.Is(err, limit.ErrRateLimited) {
		t.Fatalf("fourth permit of a burst of 3: %v, want a refusal", err)
	}
	one.Report(adaptive.Throttled, time.Second)
	one.Release()
	one.Release() // a lease is counted once
	two.Release()

	got := points(t, r, sharedLimiter)
	// The bucket refills as the test runs: TestTelemetryReadsUsageFromRedis
	// checks these on a bucket that does not.
	delete(got, telemetry.InUseName)
	delete(got, telemetry.AvailableName)
	acquired := "outcome=acquired"
	denied := "outcome=denied reason=no_permit"
	want := map[string]float64{
		telemetry.LeasesName + " " + acquired:  2,
		telemetry.LeasesName + " " + denied:    1,
		telemetry.PermitsName + " " + acquired: 3,
		telemetry.PermitsName + " " + denied:   1,
		telemetry.ThrottlesName:                1,
		telemetry.RateName:                     60,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("per_second \"grants\" points (-want +got):\n%s", diff)
	}
}

// sharedLimiter keeps the points of a shared limiter of kind per_second,
// leaving out its fail-open share's.
func sharedLimiter(set attribute.Set) bool {
	kind, _ := set.Value(telemetry.AttrLimiterKind)
	_, share := set.Value(telemetry.AttrFleetPolicy)
	return kind.AsString() == "per_second" && !share
}

// points returns the points that keep keeps (nil: all) and that are not 0,
// added up by name, then outcome and reason; a histogram's as its count
// and sum.
func points(t *testing.T, r *sdkmetric.ManualReader, keep func(attribute.Set) bool) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	add := func(name string, p metricstest.Point, v float64) {
		if o := p.Attr(telemetry.AttrOutcome); o != "" {
			name += " outcome=" + o
		}
		if reason := p.Attr(telemetry.AttrReason); reason != "" {
			name += " reason=" + reason
		}
		if v != 0 {
			got[name] += v
		}
	}
	for _, p := range metricstest.Collect(t, r) {
		switch {
		case keep != nil && !keep(p.Attrs):
		case p.Kind == "histogram":
			add(p.Name+" count", p, float64(p.Count))
			add(p.Name+" sum", p, p.Sum)
		default:
			add(p.Name, p, p.Value)
		}
	}
	return got
}

// Callers that queue are timed from queueing to their grant, the queue's
// permits are a gauge that returns to 0, and a caller whose deadline comes
// first is refused for it.
func TestTelemetryTimesTheQueue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := metricstest.New(t)
		b := &fakeBucket{interval: 100 * time.Millisecond, burst: 1}
		l := fakeLimiter(b, 1, Options{Name: "queued", QueueLimit: new(10), MeterProvider: mp})
		var wg sync.WaitGroup
		for range 3 {
			wg.Go(func() {
				lease, err := l.Acquire(context.Background())
				if err != nil {
					t.Error(err)
				}
				lease.Release()
			})
			synctest.Wait()
		}
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
			defer cancel()
			if _, err := l.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("a caller whose deadline comes before its turn: %v, want a deadline refusal", err)
			}
		})
		wg.Wait()

		got := points(t, r, sharedLimiter)
		want := map[string]float64{
			telemetry.LeasesName + " outcome=acquired":                3,
			telemetry.PermitsName + " outcome=acquired":               3,
			telemetry.LeasesName + " outcome=denied reason=deadline":  1,
			telemetry.PermitsName + " outcome=denied reason=deadline": 1,
			telemetry.RateName:                    600,
			telemetry.QueueLimitName:              10,
			telemetry.WaitDurationName + " count": 2,
			telemetry.WaitDurationName + " sum":   0.3,
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("per_second \"queued\" points (-want +got):\n%s", diff)
		}
	})
}

// A shared limiter reports in_use and available as limit's limiters do,
// read from its key on Redis when the meter collects: what every process
// has spent of the burst or window, and what is left.
func TestTelemetryReadsUsageFromRedis(t *testing.T) {
	c, prefix := testRedis(t)
	r, mp := metricstest.New(t)
	// One permit in 1,000 s: the bucket does not refill while the test runs.
	bucket, err := PerSecond(c, 0.001, 5, Options{Name: "bucket", Prefix: prefix, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	window, err := PerWindow(c, 10, time.Hour, Options{Name: "window", Prefix: prefix, MeterProvider: mp})
	if err != nil {
		t.Fatal(err)
	}
	usage := func() map[string]float64 {
		got := map[string]float64{}
		for _, p := range metricstest.Collect(t, r) {
			if _, share := p.Attrs.Value(telemetry.AttrFleetPolicy); !share && (p.Name == telemetry.InUseName || p.Name == telemetry.AvailableName) {
				got[p.Attr(telemetry.AttrLimiter)+" "+p.Name] = p.Value
			}
		}
		return got
	}
	want := map[string]float64{
		"bucket " + telemetry.InUseName: 0, "bucket " + telemetry.AvailableName: 5,
		"window " + telemetry.InUseName: 0, "window " + telemetry.AvailableName: 10,
	}
	if diff := cmp.Diff(want, usage()); diff != "" {
		t.Errorf("before any grant (-want +got):\n%s", diff)
	}
	ctx := context.Background()
	for _, l := range []limit.Limiter{bucket, window} {
		if _, err := l.AcquireN(ctx, 3); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Acquire(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// Another process's grant counts as much as this one's.
	other, err := PerWindow(c, 10, time.Hour, Options{Name: "window", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.AcquireN(ctx, 2); err != nil {
		t.Fatal(err)
	}
	want = map[string]float64{
		"bucket " + telemetry.InUseName: 4, "bucket " + telemetry.AvailableName: 1,
		"window " + telemetry.InUseName: 6, "window " + telemetry.AvailableName: 4,
	}
	if diff := cmp.Diff(want, usage()); diff != "" {
		t.Errorf("after grants (-want +got):\n%s", diff)
	}
}

// While Redis cannot be reached, a shared limiter reports no usage rather
// than a guess, and a collection is not held up past the limit's Timeout.
func TestTelemetryReportsNoUsageWithoutRedis(t *testing.T) {
	p := startPrivateRedis(t)
	r, mp := metricstest.New(t)
	lim, err := PerSecond(p.client(t), 100, 5, Options{Name: "gone", MeterProvider: mp, Timeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	lim.Acquire(context.Background())
	p.stop()
	start := time.Now()
	for _, pt := range metricstest.Collect(t, r) {
		if pt.Name == telemetry.InUseName || pt.Name == telemetry.AvailableName {
			t.Errorf("%s = %v with Redis stopped, want no point", pt.Name, pt.Value)
		}
	}
	if took := time.Since(start); took > time.Second {
		t.Errorf("a collection took %v with Redis stopped, want about the 50ms timeout", took)
	}
}

// The usage read from a key is what the scripts would find there, foreign
// or broken state included.
func TestUsageReadsKeysAsTheScriptsDo(t *testing.T) {
	const now = 1e12
	bucket := []any{1e6, 5} // a permit a second, burst 5
	for _, tc := range []struct {
		tat  string
		want float64
	}{
		{"", 0}, {"not a number", 0}, {"NaN", 0},
		{strconv.FormatFloat(now-1e6, 'f', -1, 64), 0}, // in the past: full
		{strconv.FormatFloat(now+2e6, 'f', -1, 64), 2},
		{strconv.FormatFloat(now+2.5e6, 'f', -1, 64), 3}, // a permit partly refilled is not free
		{strconv.FormatFloat(now+9e6, 'f', -1, 64), 5},   // never more than the burst
	} {
		if spent, capacity := bucketSpent(tc.tat, bucket, now); spent != tc.want || capacity != 5 {
			t.Errorf("TAT %q: spent %v of %v, want %v of 5", tc.tat, spent, capacity, tc.want)
		}
	}
	window := []any{int64(60e6), int64(7.5e6), 10} // 10 a minute, 8 segments
	h := map[string]string{
		"c1": "3", "l1": strconv.FormatFloat(now-59e6, 'f', -1, 64), // live
		"c2": "4", "l2": strconv.FormatFloat(now-61e6, 'f', -1, 64), // expired
		"c3": "x", "l3": strconv.FormatFloat(now-1e6, 'f', -1, 64), // broken: counts as the limit
	}
	if spent, capacity := windowSpent(h, window, now); spent != 10 || capacity != 10 {
		t.Errorf("window: spent %v of %v, want 10 of 10", spent, capacity)
	}
	delete(h, "c3")
	if spent, _ := windowSpent(h, window, now); spent != 3 {
		t.Errorf("window: spent %v, want 3", spent)
	}
}

// A sharded limiter's usage is the whole limit's: every shard's, each read
// with the share of the processes placed on it.
func TestTelemetryReadsUsageOfEveryShard(t *testing.T) {
	c, prefix := testRedis(t)
	r, mp := metricstest.New(t)
	var lims []limit.Limiter
	var insts []*Instances
	for i := range 2 {
		inst, err := NewInstances(c, time.Second, Options{Name: "sharded", Prefix: prefix})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { inst.Close() })
		o := Options{Name: "sharded", Prefix: prefix, Shards: 2, Instances: inst}
		if i == 0 {
			o.MeterProvider = mp
		}
		lim, err := PerWindow(c, 10, time.Hour, o)
		if err != nil {
			t.Fatal(err)
		}
		lims, insts = append(lims, lim), append(insts, inst)
	}
	for _, inst := range insts {
		waitUntil(t, 2*time.Second, "both processes to count each other", func() bool { return inst.Instances() == 2 })
	}
	for _, l := range lims { // one on each shard, of 5 permits each
		if _, err := l.AcquireN(context.Background(), 2); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string]float64{}
	for _, p := range metricstest.Collect(t, r) {
		if p.Name == telemetry.InUseName || p.Name == telemetry.AvailableName {
			got[p.Name] = p.Value
		}
	}
	want := map[string]float64{telemetry.InUseName: 4, telemetry.AvailableName: 6}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("usage of two shards (-want +got):\n%s", diff)
	}
}
