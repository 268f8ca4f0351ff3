package metrics

import (
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/telemetry"

	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/metric/noop"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// point is one collected data point, flattened for comparison.
type point struct {
	Name, Unit string
	Kind       string            // "sum", "monotonic sum", "gauge", "histogram"
	Attrs      map[string]string // all attributes, values as emitted
	Value      float64           // sums and gauges
	Count      uint64            // histograms
	Sum        float64           // histograms
	Bounds     []float64         // histograms
	Buckets    []uint64          // histograms
}

// collect reads r and returns its points, sorted, failing on any scope
// other than telemetry.ScopeName or a cumulative-only violation.
func collect(t *testing.T, r sdkmetric.Reader) []point {
	t.Helper()
	var ps []point
	for _, p := range metricstest.Collect(t, r) {
		if p.Scope != telemetry.ScopeName {
			t.Errorf("scope %q, want %q", p.Scope, telemetry.ScopeName)
		}
		if p.Kind != "gauge" && p.Temporality != metricdata.CumulativeTemporality {
			t.Errorf("%s: temporality %v", p.Name, p.Temporality)
		}
		ps = append(ps, point{Name: p.Name, Unit: p.Unit, Kind: p.Kind, Attrs: p.AttrMap(), Value: p.Value,
			Count: p.Count, Sum: p.Sum, Bounds: p.Bounds, Buckets: p.Buckets})
	}
	slices.SortFunc(ps, func(a, b point) int {
		return strings.Compare(a.Name+fmt.Sprint(a.Attrs), b.Name+fmt.Sprint(b.Attrs))
	})
	return ps
}

func newSDK(t *testing.T) (*sdkmetric.ManualReader, *sdkmetric.MeterProvider) {
	t.Helper()
	return metricstest.New(t)
}

// with returns base plus more attributes.
func with(base map[string]string, kv ...string) map[string]string {
	m := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func leases(base map[string]string, acquired float64, denied [len(reasons)]float64) []point {
	ps := []point{{Name: telemetry.LeasesName, Unit: "{lease}", Kind: "monotonic sum", Attrs: with(base, telemetry.AttrOutcome, OutcomeAcquired), Value: acquired}}
	for i, r := range reasons {
		ps = append(ps, point{Name: telemetry.LeasesName, Unit: "{lease}", Kind: "monotonic sum",
			Attrs: with(base, telemetry.AttrOutcome, OutcomeDenied, telemetry.AttrReason, r), Value: denied[i]})
	}
	// Outcomes that never happened make no series.
	ps = slices.DeleteFunc(ps, func(p point) bool { return p.Value == 0 })
	// Leases of one permit each: the permits match the leases.
	for _, p := range slices.Clone(ps) {
		p.Name, p.Unit = telemetry.PermitsName, "{permit}"
		ps = append(ps, p)
	}
	return ps
}

func sorted(ps ...[]point) []point {
	var all []point
	for _, p := range ps {
		all = append(all, p...)
	}
	slices.SortFunc(all, func(a, b point) int {
		return strings.Compare(a.Name+fmt.Sprint(a.Attrs), b.Name+fmt.Sprint(b.Attrs))
	})
	return all
}

func TestLimiterInstruments(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "api", KindConcurrency, attribute.String(telemetry.AttrServerAddress, "api.example.com"))
	defer m.Close()

	for range 3 {
		m.Acquired()
	}
	m.Denied(telemetry.ReasonNoPermit)
	m.Denied(telemetry.ReasonNoPermit)
	m.Denied(telemetry.ReasonQueueFull)
	m.Denied(telemetry.ReasonMaxWait)
	m.Denied(telemetry.ReasonDeadline)
	m.SetQueueLimit(8)
	m.QueueAdd(5)
	m.QueueAdd(-2)
	m.SetLimit(10)
	m.SetLimit(40)
	m.Throttled()
	m.Throttled()
	m.Waited(context.Background(), 250*time.Millisecond)
	m.Waited(context.Background(), 1500*time.Millisecond)

	base := map[string]string{telemetry.AttrLimiter: "api", telemetry.AttrLimiterKind: KindConcurrency, telemetry.AttrServerAddress: "api.example.com"}
	want := sorted(
		leases(base, 3, [len(reasons)]float64{2, 1, 1, 1}),
		[]point{
			{Name: telemetry.LimitName, Unit: "{permit}", Kind: "gauge", Attrs: base, Value: 40},
			{Name: telemetry.QueueLengthName, Unit: "{permit}", Kind: "gauge", Attrs: base, Value: 3},
			{Name: telemetry.QueueLimitName, Unit: "{permit}", Kind: "gauge", Attrs: base, Value: 8},
			// A non-adaptive limiter reports throttles once there are
			// some, and never cuts or pauses it did not make.
			{Name: telemetry.ThrottlesName, Unit: "{throttle}", Kind: "monotonic sum", Attrs: base, Value: 2},
			{Name: telemetry.WaitDurationName, Unit: "s", Kind: "histogram", Attrs: base, Count: 2, Sum: 1.75,
				Bounds:  waitBuckets,
				Buckets: []uint64{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0}},
		})
	if diff := cmp.Diff(want, collect(t, r)); diff != "" {
		t.Errorf("collected (-want +got):\n%s", diff)
	}
}

// Nothing is reported before it has happened, so that an idle limiter (a
// host seen once) costs no series: no zero-valued outcomes, no queue
// gauges for a limiter without a queue, no limit before the first.
func TestLimiterReportsNothingBeforeItHappens(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "rate", KindAdaptiveRate)
	defer m.Close()

	if got := collect(t, r); len(got) != 0 {
		t.Errorf("before anything happened: %d points, want none: %+v", len(got), got)
	}

	base := map[string]string{telemetry.AttrLimiter: "rate", telemetry.AttrLimiterKind: KindAdaptiveRate}
	m.SetLimit(600) // 10 per second
	m.Throttled()
	m.Cut()
	m.Paused()
	m.Throttled()
	m.SetLimit(420)
	want := sorted([]point{
		{Name: telemetry.ThrottlesName, Unit: "{throttle}", Kind: "monotonic sum", Attrs: base, Value: 2},
		{Name: telemetry.CutsName, Unit: "{cut}", Kind: "monotonic sum", Attrs: base, Value: 1},
		{Name: telemetry.PausesName, Unit: "{pause}", Kind: "monotonic sum", Attrs: base, Value: 1},
		{Name: telemetry.RateName, Unit: "{permit}/min", Kind: "gauge", Attrs: base, Value: 420},
	})
	if diff := cmp.Diff(want, collect(t, r)); diff != "" {
		t.Errorf("after (-want +got):\n%s", diff)
	}
}

func TestLimiterDeniedByReason(t *testing.T) {
	for _, reason := range []string{telemetry.ReasonNoPermit, telemetry.ReasonQueueFull, telemetry.ReasonMaxWait, telemetry.ReasonDeadline, telemetry.ReasonShed, "other"} {
		t.Run(reason, func(t *testing.T) {
			r, mp := newSDK(t)
			m := NewLimiter(mp, "l", KindPerWindow)
			defer m.Close()
			for range 7 {
				m.Denied(reason)
			}
			got := map[string]float64{}
			for _, p := range collect(t, r) {
				if p.Name == telemetry.LeasesName && p.Attrs[telemetry.AttrOutcome] == OutcomeDenied && p.Value != 0 {
					reason, ok := p.Attrs[telemetry.AttrReason]
					if !ok {
						reason = "(none)"
					}
					got[reason] += p.Value
				}
			}
			want := map[string]float64{reason: 7}
			if reason == "other" {
				want = map[string]float64{"(none)": 7}
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("denied by reason (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLimiterWaitedSeconds(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "q", KindPerSecond)
	defer m.Close()
	m.Waited(context.Background(), 2*time.Millisecond)
	m.Waited(context.Background(), -time.Second) // clamped to 0
	m.Waited(context.Background(), 90*time.Second)

	var got []point
	for _, p := range collect(t, r) {
		if p.Name == telemetry.WaitDurationName {
			got = append(got, p)
		}
	}
	want := []point{{
		Name: telemetry.WaitDurationName, Unit: "s", Kind: "histogram",
		Attrs: map[string]string{telemetry.AttrLimiter: "q", telemetry.AttrLimiterKind: KindPerSecond},
		Count: 3, Sum: 90.002, Bounds: waitBuckets,
		Buckets: []uint64{1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0},
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("wait histogram (-want +got):\n%s", diff)
	}
}

func TestLimiterCloseUnregisters(t *testing.T) {
	r, mp := newSDK(t)
	a := NewLimiter(mp, "a", KindPerSecond)
	b := NewLimiter(mp, "b", KindPerSecond)
	defer b.Close()
	a.Acquired()
	a.Waited(context.Background(), time.Millisecond)
	b.Acquired()

	names := func() map[string]int {
		n := map[string]int{}
		for _, p := range collect(t, r) {
			if p.Name != telemetry.WaitDurationName { // synchronous: stays cumulative
				n[p.Attrs[telemetry.AttrLimiter]]++
			}
		}
		return n
	}
	if diff := cmp.Diff(map[string]int{"a": 2, "b": 2}, names()); diff != "" {
		t.Fatalf("before Close (-want +got):\n%s", diff)
	}
	a.Close()
	a.Close() // idempotent
	a.Acquired()
	a.Waited(context.Background(), time.Hour) // after Close: not recorded
	if diff := cmp.Diff(map[string]int{"b": 2}, names()); diff != "" {
		t.Errorf("after Close (-want +got):\n%s", diff)
	}
	for _, p := range collect(t, r) {
		if p.Name == telemetry.WaitDurationName && p.Count != 1 {
			t.Errorf("wait histogram of %s counts %d after Close, want 1", p.Attrs[telemetry.AttrLimiter], p.Count)
		}
	}
}

// gcUntil runs the collector until done reports true, a bounded number of
// times; cleanups run on their own goroutine, so it yields in between.
func gcUntil(tries int, done func() bool) bool {
	for range tries {
		if done() {
			return true
		}
		runtime.GC()
		runtime.Gosched()
	}
	return done()
}

type owner struct {
	m *Limiter
	_ [64]byte // not a tiny allocation
}

func TestLimiterCloseWhenUnreachable(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "owned", KindConcurrency)
	o := &owner{m: m}
	m.CloseWhenUnreachable(o)
	o.m.Acquired()
	if len(collect(t, r)) == 0 {
		t.Fatal("nothing reported while the owner is alive")
	}
	runtime.KeepAlive(o)
	o = nil

	if !gcUntil(200, m.closed.Load) {
		t.Fatal("the Limiter was not closed after its owner became unreachable")
	}
	if ps := collect(t, r); len(ps) != 0 {
		t.Errorf("still reported after the owner was collected: %v", ps)
	}
}

// TestLimiterCloseReleases checks that a closed Limiter is no longer held by
// the meter provider, and that an open one is.
func TestLimiterCloseReleases(t *testing.T) {
	_, mp := newSDK(t)
	collected := func(close bool, tries int) bool {
		freed := new(atomic.Bool)
		func() {
			m := NewLimiter(mp, "released", KindConcurrency)
			runtime.AddCleanup(m, func(f *atomic.Bool) { f.Store(true) }, freed)
			if close {
				m.Close()
			}
		}()
		return gcUntil(tries, freed.Load)
	}
	if !collected(true, 200) {
		t.Error("a closed Limiter was not collected")
	}
	if collected(false, 20) {
		t.Error("an open Limiter was collected while its callback is registered")
	}
}

func TestLimiterCloseStopsCleanup(t *testing.T) {
	_, mp := newSDK(t)
	m := NewLimiter(mp, "closed", KindConcurrency)
	o := &owner{m: m}
	m.CloseWhenUnreachable(o)
	m.CloseWhenUnreachable(o)
	if len(m.cleanups) != 2 {
		t.Fatalf("%d cleanups, want 2", len(m.cleanups))
	}
	m.Close()
	if m.cleanups != nil {
		t.Error("Close left cleanups registered")
	}
	m.CloseWhenUnreachable(o) // after Close: nothing to arrange
	if m.cleanups != nil {
		t.Error("CloseWhenUnreachable after Close registered a cleanup")
	}
	runtime.KeepAlive(o)
}

func TestLimiterCloseWhenUnreachableBadOwner(t *testing.T) {
	_, mp := newSDK(t)
	m := NewLimiter(mp, "bad", KindConcurrency)
	defer m.Close()
	var nilOwner *owner
	for _, o := range []any{nil, owner{}, nilOwner, m} {
		errs := handled(t, func() { m.CloseWhenUnreachable(o) })
		if len(errs) != 1 {
			t.Errorf("owner %T: %d errors handled, want 1", o, len(errs))
		}
	}
	if len(m.cleanups) != 0 {
		t.Errorf("%d cleanups registered for bad owners", len(m.cleanups))
	}
}

func TestLimiterNilProviderUsesGlobal(t *testing.T) {
	r, mp := newSDK(t)
	otel.SetMeterProvider(mp)
	t.Cleanup(func() { otel.SetMeterProvider(noop.NewMeterProvider()) })

	m := NewLimiter(nil, "global", KindPerSecond)
	defer m.Close()
	m.Acquired()
	m.SetLimit(6000)
	var got []float64
	for _, p := range collect(t, r) {
		if p.Attrs[telemetry.AttrLimiter] == "global" && (p.Name == telemetry.RateName || p.Attrs[telemetry.AttrOutcome] == OutcomeAcquired) {
			got = append(got, p.Value)
		}
	}
	// Sorted by name: leases, permits, then rate.
	if diff := cmp.Diff([]float64{1, 1, 6000}, got); diff != "" {
		t.Errorf("through the global provider (-want +got):\n%s", diff)
	}
}

func TestNilLimiter(t *testing.T) {
	var m *Limiter
	m.Acquired()
	m.Denied(telemetry.ReasonNoPermit)
	m.Denied("other")
	m.Waited(context.Background(), time.Second)
	m.SetLimit(1)
	m.QueueAdd(1)
	m.Throttled()
	m.Cut()
	m.Paused()
	m.CloseWhenUnreachable(&owner{})
	m.Close()
}

// handled runs f and returns the errors it reported through otel.Handle.
func handled(t *testing.T, f func()) []error {
	t.Helper()
	errHandlerOnce.Do(func() {
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			errMu.Lock()
			defer errMu.Unlock()
			errs = append(errs, err)
		}))
	})
	errMu.Lock()
	errs = nil
	errMu.Unlock()
	f()
	errMu.Lock()
	defer errMu.Unlock()
	got := errs
	errs = nil
	return got
}

var (
	errHandlerOnce sync.Once
	errMu          sync.Mutex
	errs           []error
)

var errBoom = errors.New("boom")

// failingMeter fails to create the instrument named failOn, or to register
// a callback when failOn is "callback".
type failingMeterProvider struct {
	noop.MeterProvider
	failOn string
}

func (p failingMeterProvider) Meter(string, ...metric.MeterOption) metric.Meter {
	return failingMeter{failOn: p.failOn}
}

type failingMeter struct {
	noop.Meter
	failOn string
}

func (f failingMeter) err(name string) error {
	if name == f.failOn {
		return errBoom
	}
	return nil
}

func (f failingMeter) Int64ObservableCounter(name string, _ ...metric.Int64ObservableCounterOption) (metric.Int64ObservableCounter, error) {
	return noop.Int64ObservableCounter{}, f.err(name)
}

func (f failingMeter) Int64ObservableGauge(name string, _ ...metric.Int64ObservableGaugeOption) (metric.Int64ObservableGauge, error) {
	return noop.Int64ObservableGauge{}, f.err(name)
}

func (f failingMeter) Float64ObservableGauge(name string, _ ...metric.Float64ObservableGaugeOption) (metric.Float64ObservableGauge, error) {
	return noop.Float64ObservableGauge{}, f.err(name)
}

func (f failingMeter) Float64Histogram(name string, _ ...metric.Float64HistogramOption) (metric.Float64Histogram, error) {
	return noop.Float64Histogram{}, f.err(name)
}

func (f failingMeter) RegisterCallback(metric.Callback, ...metric.Observable) (metric.Registration, error) {
	if f.failOn == "callback" {
		return nil, errBoom
	}
	return noop.Registration{}, nil
}

func TestLimiterInstrumentErrors(t *testing.T) {
	for _, failOn := range []string{telemetry.LeasesName, telemetry.WaitDurationName, telemetry.LimitName, telemetry.QueueLengthName, telemetry.ThrottlesName, telemetry.CutsName, telemetry.PausesName, "callback"} {
		t.Run(failOn, func(t *testing.T) {
			var m *Limiter
			errs := handled(t, func() {
				m = NewLimiter(failingMeterProvider{failOn: failOn}, "broken", KindAdaptive)
			})
			if len(errs) != 1 || !errors.Is(errs[0], errBoom) || !strings.Contains(errs[0].Error(), `"broken"`) {
				t.Errorf("handled %v, want one error wrapping %v that names the limiter", errs, errBoom)
			}
			if m == nil {
				t.Fatal("NewLimiter returned nil")
			}
			if m.wait != nil || m.reg != nil {
				t.Error("a Limiter whose instruments failed still records")
			}
			// Still usable, records nothing, closes cleanly.
			m.Acquired()
			m.Denied(telemetry.ReasonMaxWait)
			m.Waited(context.Background(), time.Second)
			m.SetLimit(3)
			m.Close()
		})
	}
}

// TestLimiterConcurrent exercises every method from several goroutines
// under the race detector while the reader collects, and checks the totals.
func TestLimiterConcurrent(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "busy", KindAdaptiveRate)
	defer m.Close()
	const workers, each = 8, 500
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				m.Acquired()
				m.Denied(reasons[(w+i)%len(reasons)])
				m.QueueAdd(1)
				m.QueueAdd(-1)
				m.SetLimit(float64(i))
				m.Throttled()
				m.Cut()
				m.Paused()
				if i%50 == 0 {
					m.Waited(context.Background(), time.Duration(i)*time.Millisecond)
				}
			}
		})
	}
	wg.Go(func() {
		for range 20 {
			var rm metricdata.ResourceMetrics
			if err := r.Collect(context.Background(), &rm); err != nil {
				t.Error(err)
			}
		}
	})
	wg.Wait()

	got := map[string]float64{}
	for _, p := range collect(t, r) {
		key := p.Name
		if p.Name == telemetry.LeasesName || p.Name == telemetry.PermitsName {
			key += "/" + p.Attrs[telemetry.AttrOutcome]
		}
		if p.Name == telemetry.RateName {
			continue // whichever was last
		}
		got[key] += p.Value + float64(p.Count)
	}
	n := float64(workers * each)
	want := map[string]float64{
		telemetry.LeasesName + "/" + OutcomeAcquired:  n,
		telemetry.LeasesName + "/" + OutcomeDenied:    n,
		telemetry.PermitsName + "/" + OutcomeAcquired: n,
		telemetry.PermitsName + "/" + OutcomeDenied:   n,
		telemetry.ThrottlesName:                       n,
		telemetry.CutsName:                            n,
		telemetry.PausesName:                          n,
		telemetry.WaitDurationName:                    workers * each / 50,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("totals (-want +got):\n%s", diff)
	}
}

// A lease counts once and its permits at its cost, whatever the cost:
// those the stripes count by cost, those past costedMax, and none.
func TestLeasesOfEveryCostCountTheirPermits(t *testing.T) {
	r, mp := newSDK(t)
	m := NewLimiter(mp, "costs", KindPerSecond)
	defer m.Close()
	costs := []int{0, 1, 2, 3, costedMax - 1, costedMax, costedMax + 1, 1000}
	var permits float64
	for _, c := range costs {
		m.AcquiredN(c)
		permits += float64(c)
	}
	got := map[string]float64{}
	for _, p := range collect(t, r) {
		got[p.Name] += p.Value
	}
	want := map[string]float64{telemetry.LeasesName: float64(len(costs)), telemetry.PermitsName: permits}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("points (-want +got):\n%s", diff)
	}
}
