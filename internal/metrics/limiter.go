package metrics

import (
	"github.com/headroom-go/headroom/telemetry"

	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Limiter holds one limiter's instruments. Its fast-path methods (Acquired,
// Denied, QueueAdd, Throttled, Cut, Paused, SetLimit) cost one atomic
// operation: counts and gauges are read by observable instruments when the
// meter collects, through one callback per Limiter, so nothing of
// OpenTelemetry sits on the limiter's critical section. Waited, called only
// by a caller that queued, records on a histogram.
//
// The registered callback keeps the Limiter reachable from the meter
// provider until Close; an owner that may be dropped without being closed
// should call CloseWhenUnreachable.
//
// A nil *Limiter records nothing; all methods are safe for concurrent use.
type Limiter struct {
	// The fast path. Acquired and the no_permit denial are the hot ones;
	// they are spread over stripes so that parallel callers do not fight
	// over one cache line.
	stripes [stripes]stripe
	denied  [len(reasons)]atomic.Int64 // [0], no_permit, lives in stripes
	// deniedMore holds the permits of denied leases beyond their first,
	// by reason, the last for a reason not in reasons.
	deniedMore [len(reasons) + 1]atomic.Int64
	queued     atomic.Int64
	queueMax   atomic.Int64
	limit      atomic.Uint64 // math.Float64bits of the limit
	hasLimit   atomic.Bool
	throttles  atomic.Int64
	cuts       atomic.Int64
	pauses     atomic.Int64
	closed     atomic.Bool
	// granted, when set, counts permits the limiter's engine granted
	// (CountGrants); countedMore are their permits beyond one a lease.
	granted     atomic.Pointer[func() int64]
	countedMore atomic.Int64

	// into is the shared Limiter a folded host's handle records into
	// (see HostSeries); fold is set on that shared Limiter.
	into *Limiter
	fold *fold

	// events logs the pauses and cuts (Log); name is AttrLimiter's value.
	events atomic.Pointer[Events]
	name   attribute.KeyValue

	// Set by NewLimiter, read-only after.
	adaptive  bool
	rateKind  bool                    // the limit is a rate: RateName, not LimitName
	wait      metric.Float64Histogram // nil: record nothing
	waitOpts  []metric.RecordOption
	leases    metric.Int64ObservableCounter
	permits   metric.Int64ObservableCounter
	limitG    metric.Float64ObservableGauge
	figureG   [figureCount]metric.Float64ObservableGauge
	sample    atomic.Pointer[func(Figures)]
	live      liveKey
	queueG    metric.Int64ObservableGauge
	queueMaxG metric.Int64ObservableGauge
	throttleC metric.Int64ObservableCounter
	cutC      metric.Int64ObservableCounter
	pauseC    metric.Int64ObservableCounter
	base      []metric.ObserveOption
	acqOpts   []metric.ObserveOption
	denyOpts  [len(reasons) + 1][]metric.ObserveOption // last: unknown reason

	mu       sync.Mutex // guards reg and cleanups
	reg      metric.Registration
	cleanups []runtime.Cleanup
}

// stripes is the number of stripes of the hot counters.
const (
	stripeBits = 3
	stripes    = 1 << stripeBits
)

// stripe holds a share of the hot counters, alone on its cache lines (128
// bytes, for CPUs that fetch lines in adjacent pairs).
type stripe struct {
	// leases counts granted leases by cost: leases[c-1] those of c
	// permits, for c up to costedMax, so that a lease costs one atomic add
	// whatever its cost, rather than one for the lease and one for its
	// permits. A lease of another cost counts in leases[0] and its permits
	// beyond the first in acquiredMore. They fill the stripe's 128 bytes.
	leases       [costedMax]atomic.Int64
	acquiredMore atomic.Int64
	noPermit     atomic.Int64
	other        atomic.Int64 // denials with a reason not in reasons
}

// costedMax is the largest cost stripe.leases counts apart.
const costedMax = 13

// A stripe is exactly its 128 bytes: neither array length may be negative.
var (
	_ [unsafe.Sizeof(stripe{}) - 128]byte
	_ [128 - unsafe.Sizeof(stripe{})]byte
)

// reasons are the values of telemetry.AttrReason on denied leases, in the order of
// Limiter.denied.
var reasons = [...]string{telemetry.ReasonNoPermit, telemetry.ReasonQueueFull, telemetry.ReasonMaxWait, telemetry.ReasonDeadline, telemetry.ReasonShed}

// waitBuckets are the bucket boundaries of telemetry.WaitDurationName, in seconds:
// from a millisecond to the adaptive rate limiter's longest wait.
var waitBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120}

// NewLimiter registers the instruments of the limiter called name of the
// given kind (KindPerSecond, KindPerWindow, KindConcurrency, KindAdaptive,
// KindAdaptiveRate) with mp; nil mp means the global meter provider
// (otel.GetMeterProvider). Every instrument carries telemetry.AttrLimiter = name,
// telemetry.AttrLimiterKind = kind and the extra attributes, such as telemetry.AttrServerAddress in httpx.
//
// NewLimiter never fails: when an instrument cannot be created, it reports
// the error through otel.Handle and the Limiter records nothing.
//
// Call Close when the limiter is done with, or CloseWhenUnreachable.
//
// Live limiters never share attributes: the SDK would add up their counters
// and show one of their gauges. A limiter whose attributes match a live
// one's on the same meter provider is named name#2, name#3 and so on, the
// lowest number free. httpx's per-host limiters still meet a reset: a host
// idle long enough to be dropped comes back with a new limiter that
// counts from 0, which a backend such as Prometheus reads as a reset.
func NewLimiter(mp metric.MeterProvider, name, kind string, extra ...attribute.KeyValue) *Limiter {
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	attrs := func(name string) []attribute.KeyValue {
		return append([]attribute.KeyValue{attribute.String(telemetry.AttrLimiter, name), attribute.String(telemetry.AttrLimiterKind, kind)}, extra...)
	}
	if Folded(extra) {
		h := foldedLimiter(mp, kind, attrs(name))
		h.name = attribute.String(telemetry.AttrLimiter, name)
		return h
	}
	live, kvs := claim(mp, attrs, name)
	return newLimiter(mp, kind, kvs, live)
}

// newLimiter is NewLimiter's Limiter with the attributes kvs (later values
// of a key win), holding live.
func newLimiter(mp metric.MeterProvider, kind string, kvs []attribute.KeyValue, live liveKey) *Limiter {
	m := &Limiter{
		adaptive: kind == KindAdaptive || kind == KindAdaptiveRate,
		rateKind: kind == KindPerSecond || kind == KindPerWindow || kind == KindAdaptiveRate,
		live:     live,
	}
	base := attrSet(kvs)
	name, _ := base.Value(telemetry.AttrLimiter)
	m.name = attribute.KeyValue{Key: telemetry.AttrLimiter, Value: name}
	m.base = []metric.ObserveOption{metric.WithAttributeSet(base)}
	m.acqOpts = []metric.ObserveOption{metric.WithAttributeSet(attrSet(kvs, attribute.String(telemetry.AttrOutcome, OutcomeAcquired)))}
	for i, r := range reasons {
		m.denyOpts[i] = []metric.ObserveOption{metric.WithAttributeSet(attrSet(kvs,
			attribute.String(telemetry.AttrOutcome, OutcomeDenied), attribute.String(telemetry.AttrReason, r)))}
	}
	m.denyOpts[len(reasons)] = []metric.ObserveOption{metric.WithAttributeSet(attrSet(kvs, attribute.String(telemetry.AttrOutcome, OutcomeDenied)))}

	in := newInstruments(mp)
	m.leases = in.observableCounter(telemetry.LeasesName, "{lease}", "Leases asked for, by outcome: acquired or denied (with the reason).")
	m.permits = in.observableCounter(telemetry.PermitsName, "{permit}", "Permits the leases asked for, by outcome: acquired or denied (with the reason).")
	m.wait = in.histogram(telemetry.WaitDurationName, "How long a caller waited in the limiter's queue.", waitBuckets)
	if m.rateKind {
		m.limitG = in.observableFloatGauge(telemetry.RateName, "{permit}/min", "The rate limit, in permits a minute.")
	} else {
		m.limitG = in.observableFloatGauge(telemetry.LimitName, "{permit}", "The concurrency limit.")
	}
	m.queueMaxG = in.observableGauge(telemetry.QueueLimitName, "{permit}", "Permits the limiter's queue may hold; 0 when it does not queue.")
	observables := []metric.Observable{m.leases, m.permits, m.limitG, m.queueMaxG}
	for f, d := range figureDefs {
		m.figureG[f] = in.observableFloatGauge(d.name, d.unit, d.desc)
		observables = append(observables, m.figureG[f])
	}
	m.queueG = in.observableGauge(telemetry.QueueLengthName, "{permit}", "Permits held by callers waiting in the limiter's queue.")
	m.throttleC = in.observableCounter(telemetry.ThrottlesName, "{throttle}", "Throttles reported on leases.")
	m.cutC = in.observableCounter(telemetry.CutsName, "{cut}", "Cuts of an adaptive limit.")
	m.pauseC = in.observableCounter(telemetry.PausesName, "{pause}", "Pauses of an adaptive rate limiter after a Retry-After.")
	err := in.err
	if err == nil {
		m.reg, err = in.meter.RegisterCallback(m.observe, append(observables, m.queueG, m.throttleC, m.cutC, m.pauseC)...)
	}
	if err != nil {
		m.live.release()
		otel.Handle(fmt.Errorf("headroom/telemetry: limiter %q: %w", name.AsString(), err))
		m.wait, m.reg = nil, nil
		m.closed.Store(true)
		return m
	}
	m.waitOpts = []metric.RecordOption{metric.WithAttributeSet(base)}
	register(&registry.limiters, m)
	return m
}

// observe is the Limiter's one callback: it reads the atomics. A closing
// Limiter observes nothing, even before its callback is unregistered. A
// series is reported once what it counts has happened, or, for a gauge,
// once the limiter has what it measures (a queue, a limit): nothing is
// made in advance, so that an idle host costs no series.
func (m *Limiter) observe(_ context.Context, o metric.Observer) error {
	if m.closed.Load() {
		return nil
	}
	m.observeLeases(o)
	if qm := m.queueMax.Load(); qm != 0 {
		o.ObserveInt64(m.queueG, m.queued.Load(), m.base...)
		o.ObserveInt64(m.queueMaxG, qm, m.base...)
	}
	if m.hasLimit.Load() {
		o.ObserveFloat64(m.limitG, math.Float64frombits(m.limit.Load()), m.base...)
	}
	for _, c := range [...]struct {
		inst metric.Int64ObservableCounter
		n    int64
	}{{m.throttleC, m.throttles.Load()}, {m.cutC, m.cuts.Load()}, {m.pauseC, m.pauses.Load()}} {
		if c.n != 0 {
			o.ObserveInt64(c.inst, c.n, m.base...)
		}
	}
	if f := m.sample.Load(); f != nil {
		(*f)(Figures{o: o, m: m})
	}
	return nil
}

// observeLeases reports the leases and permits of each outcome that has
// happened.
func (m *Limiter) observeLeases(o metric.Observer) {
	var acquired, permits, noPermit, other int64
	for i := range m.stripes {
		s := &m.stripes[i]
		for c := range s.leases {
			n := s.leases[c].Load()
			acquired += n
			permits += n * int64(c+1)
		}
		permits += s.acquiredMore.Load()
		noPermit += s.noPermit.Load()
		other += s.other.Load()
	}
	counted := m.fold != nil
	var n int64
	if g := m.granted.Load(); g != nil {
		n, counted = (*g)(), true
	}
	if m.fold != nil {
		n += m.fold.grants()
	}
	if counted {
		acquired += n - m.countedMore.Load()
		permits += n
	}
	if acquired != 0 {
		o.ObserveInt64(m.leases, acquired, m.acqOpts...)
		o.ObserveInt64(m.permits, permits, m.acqOpts...)
	}
	for i := range reasons {
		n := noPermit
		if i > 0 {
			n = m.denied[i].Load()
		}
		if n != 0 {
			o.ObserveInt64(m.leases, n, m.denyOpts[i]...)
			o.ObserveInt64(m.permits, n+m.deniedMore[i].Load(), m.denyOpts[i]...)
		}
	}
	if other != 0 {
		o.ObserveInt64(m.leases, other, m.denyOpts[len(reasons)]...)
		o.ObserveInt64(m.permits, other+m.deniedMore[len(reasons)].Load(), m.denyOpts[len(reasons)]...)
	}
}

// Close unregisters the instruments' callback and stops recording. It is
// idempotent.
func (m *Limiter) Close() {
	if m == nil {
		return
	}
	if !m.closed.Swap(true) {
		unregister(&registry.limiters, m)
		m.live.release()
		if m.into != nil {
			m.leave()
		}
	}
	m.mu.Lock()
	reg, cleanups := m.reg, m.cleanups
	m.reg, m.cleanups = nil, nil
	m.mu.Unlock()
	for _, c := range cleanups {
		c.Stop()
	}
	if reg != nil {
		if err := reg.Unregister(); err != nil {
			otel.Handle(fmt.Errorf("headroom/telemetry: unregister: %w", err))
		}
	}
}

// CloseWhenUnreachable arranges for Close to be called once owner, a
// pointer to the object that holds m (typically the limiter), becomes
// unreachable. It does what an owner could write itself:
//
//	runtime.AddCleanup(owner, func(m *telemetry.Limiter) { m.Close() }, m)
//
// The meter provider keeps m reachable until Close, so m must not
// reference owner, or owner is never collected. An owner that is not a
// non-nil pointer, or is m itself, is reported through otel.Handle and
// ignored. As with runtime.AddCleanup, a cleanup may never run for a
// package-level variable or a tiny pointer-free object.
func (m *Limiter) CloseWhenUnreachable(owner any) {
	if m == nil {
		return
	}
	v := reflect.ValueOf(owner)
	if !v.IsValid() || v.Kind() != reflect.Pointer || v.IsNil() {
		otel.Handle(fmt.Errorf("headroom/telemetry: CloseWhenUnreachable: owner %T is not a non-nil pointer", owner))
		return
	}
	p := (*byte)(v.UnsafePointer())
	if v.Pointer() == reflect.ValueOf(m).Pointer() {
		otel.Handle(errors.New("headroom/telemetry: CloseWhenUnreachable: owner is the Limiter itself"))
		return
	}
	c := runtime.AddCleanup(p, (*Limiter).Close, m)
	m.mu.Lock()
	if m.reg == nil && m.closed.Load() {
		m.mu.Unlock()
		c.Stop()
		return
	}
	m.cleanups = append(m.cleanups, c)
	m.mu.Unlock()
}

// stripe picks the calling goroutine's stripe from a hash of its stack
// address: a goroutine keeps its stripe while its stack stays put, and
// goroutines running side by side most likely land on different stripes.
//
// Why stripes rather than one atomic word: a limiter's own state is already
// one contended cache line, and a shared counter would add a second to
// every Acquire. Measured on 2 busy shared cores (limit's
// *AcquireReleaseParallel, 8 interleaved runs of each), one word instead of
// the stripes made PerSecond 80 → 107 ns and Concurrency 23 → 35 ns, a
// direction the noise (±30–70 %) does not make significant; contention on
// one word only grows with cores. Re-measure on a quiet many-core machine
// before trading the stripes for the simpler word.
func (m *Limiter) stripe() *stripe {
	var x byte
	h := uint64(uintptr(unsafe.Pointer(&x))>>10) * 0x9e3779b97f4a7c15
	return &m.stripes[h>>(64-stripeBits)]
}

// Acquired counts a granted lease of one permit.
func (m *Limiter) Acquired() {
	if m != nil {
		m.sink().stripe().leases[0].Add(1)
	}
}

// sink is the Limiter that counts m's events: the shared one of a folded
// series, else m.
func (m *Limiter) sink() *Limiter {
	if m.into != nil {
		return m.into
	}
	return m
}

// AcquiredN counts a granted lease of n permits: one atomic add, as
// Acquired costs, for n up to costedMax.
func (m *Limiter) AcquiredN(n int) {
	if m == nil {
		return
	}
	// sink() spelled out keeps AcquiredN within the inlining budget.
	if m.into != nil {
		m = m.into
	}
	s := m.stripe()
	c := uint(n - 1)
	if c >= costedMax {
		s.acquiredMore.Add(int64(c))
		c = 0
	}
	s.leases[c].Add(1)
}

// CountGrants makes granted the count of the permits the limiter's engine
// granted, read when the meter collects, so that a grant costs the fast
// path no atomic operation of the recorder's: a limiter whose engine
// counts its grants reports those, and counts with Acquired and AcquiredN
// only the grants its engine does not see. A lease of several permits that
// granted counts is counted once more with CountedMore, so that it is one
// lease. granted must not reference the limiter that owns m (see Sample).
func (m *Limiter) CountGrants(granted func() int64) {
	switch {
	case m == nil:
	case m.into != nil:
		f := m.into.fold
		f.mu.Lock()
		f.granted[m] = granted
		f.mu.Unlock()
	default:
		m.granted.Store(&granted)
	}
}

// CountedMore counts a granted lease of n permits that the engine's count
// (CountGrants) has already counted as n permits: it is one lease.
func (m *Limiter) CountedMore(n int) {
	if m != nil && n > 1 {
		m.sink().countedMore.Add(int64(n - 1))
	}
}

// Denied counts a refused lease of one permit with its reason, one of the
// telemetry.Reason values; another is counted as denied without a reason.
func (m *Limiter) Denied(reason string) { m.DeniedN(reason, 1) }

// DeniedN counts a refused lease of n permits with its reason; see Denied.
func (m *Limiter) DeniedN(reason string, n int) {
	if m == nil {
		return
	}
	m = m.sink()
	i := len(reasons)
	switch reason {
	case telemetry.ReasonNoPermit:
		m.stripe().noPermit.Add(1)
		i = 0
	case telemetry.ReasonQueueFull:
		i = 1
	case telemetry.ReasonMaxWait:
		i = 2
	case telemetry.ReasonDeadline:
		i = 3
	case telemetry.ReasonShed:
		i = 4
	default:
		m.stripe().other.Add(1)
	}
	if i > 0 && i < len(reasons) {
		m.denied[i].Add(1)
	}
	if n != 1 {
		m.deniedMore[i].Add(int64(n - 1))
	}
}

// Waited records how long a caller waited in the queue, with the caller's
// ctx, so that a sampled trace's exemplar points at the wait. Only a
// caller that queued calls it.
func (m *Limiter) Waited(ctx context.Context, d time.Duration) {
	if m == nil {
		return
	}
	d = max(d, 0)
	SpanEvent(ctx, telemetry.EventWait, m.name, attribute.Float64(telemetry.AttrWaitDuration, d.Seconds()))
	if m = m.sink(); m.wait == nil || m.closed.Load() {
		return
	}
	m.wait.Record(ctx, d.Seconds(), m.waitOpts...)
}

// Log sends the limiter's notable events to l: a pause after a Retry-After
// (Info), a cut of its limit or rate (Debug). nil l logs nothing.
func (m *Limiter) Log(l *slog.Logger) {
	if m != nil {
		m.events.Store(NewEvents(l, slog.String(telemetry.AttrLimiter, m.name.Value.AsString())))
	}
}

// SetLimit records the limit: a concurrency limit (LimitName), or for the
// rate kinds a rate in permits per minute (RateName). A folded series
// reports no limit: limits of several hosts do not add up.
func (m *Limiter) SetLimit(v float64) {
	if m != nil && m.into == nil {
		m.limit.Store(math.Float64bits(v))
		if !m.hasLimit.Load() {
			m.hasLimit.Store(true)
		}
	}
}

// SetQueueLimit records how many permits the queue may hold.
func (m *Limiter) SetQueueLimit(n int) {
	if m != nil && m.into == nil {
		m.queueMax.Store(int64(n))
	}
}

// QueueAdd changes the queue length by delta permits.
func (m *Limiter) QueueAdd(delta int64) {
	if m != nil && m.into == nil {
		m.queued.Add(delta)
	}
}

// Throttled counts a throttle reported on a lease.
func (m *Limiter) Throttled() {
	if m != nil {
		m.sink().throttles.Add(1)
	}
}

// Cut counts a cut of an adaptive limit.
func (m *Limiter) Cut() {
	if m != nil {
		m.sink().cuts.Add(1)
		m.events.Load().Log(context.Background(), slog.LevelDebug, "limiter cut its limit", "")
	}
}

// Paused counts a pause after a Retry-After.
func (m *Limiter) Paused() {
	if m != nil {
		m.sink().pauses.Add(1)
		m.events.Load().Log(context.Background(), slog.LevelInfo, "limiter paused after a Retry-After", "")
	}
}
