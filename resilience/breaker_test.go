package resilience

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/telemetry"
	"go.opentelemetry.io/otel/metric"
)

type transition struct{ From, To State }

func TestBreakerOpensAndHalfOpens(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mu sync.Mutex
		var changes []transition
		br, err := NewBreaker(BreakerOptions{Name: "api", ConsecutiveFailures: 3, BreakDuration: 5 * time.Second,
			OnStateChange: func(from, to State) { mu.Lock(); changes = append(changes, transition{from, to}); mu.Unlock() }})
		if err != nil {
			t.Fatal(err)
		}
		p, _ := bare(Options{Breaker: br})
		fail := func(ctx context.Context) (int, error) { return 0, errors.New("503") }
		for range 3 {
			_, _ = Run(t.Context(), p, fail)
		}
		if br.State() != Open {
			t.Fatalf("after 3 failures: %v; want open", br.State())
		}
		time.Sleep(2 * time.Second)
		calls := 0
		r := Try(t.Context(), p, func(ctx context.Context) (int, error) { calls++; return 1, nil })
		var open *BreakerOpenError
		if r.Stop != StopBreakerOpen || calls != 0 || !errors.As(r.Err, &open) || open.RetryAfter != 3*time.Second ||
			!errors.Is(r.Err, ErrBreakerOpen) || open.Breaker != "api" {
			t.Fatalf("while open: stop %v, %d calls, err %v; want breaker_open, no call, retry after 3s", r.Stop, calls, r.Err)
		}
		time.Sleep(3 * time.Second)
		// Half-open: the probe fails, the breaker opens again.
		_, _ = Run(t.Context(), p, fail)
		if br.State() != Open {
			t.Fatalf("after a failed probe: %v; want open", br.State())
		}
		time.Sleep(5 * time.Second)
		if v, err := Run(t.Context(), p, func(ctx context.Context) (int, error) { return 7, nil }); v != 7 || err != nil {
			t.Fatalf("probe: %v, %v", v, err)
		}
		want := []transition{{Closed, Open}, {Open, HalfOpen}, {HalfOpen, Open}, {Open, HalfOpen}, {HalfOpen, Closed}}
		if d := cmp.Diff(want, changes); d != "" {
			t.Errorf("state changes (-want +got):\n%s", d)
		}
	})
}

func TestBreakerOneProbeAtATime(t *testing.T) {
	t0 := time.Unix(1000, 0)
	br, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Second})
	br.record(t0, false, Transient, 0)
	t1 := t0.Add(time.Second)
	probe, err := br.allow(t1)
	if !probe || err != nil {
		t.Fatalf("first call after the break: probe %v, %v", probe, err)
	}
	var open *BreakerOpenError
	if _, err := br.allow(t1); !errors.As(err, &open) || open.RetryAfter != 0 {
		t.Fatalf("second call while probing: %v; want refused, retry after 0", err)
	}
	// A throttled probe proves nothing and frees the slot.
	br.record(t1, true, Throttled, 0)
	if br.State() != HalfOpen {
		t.Fatalf("after a throttled probe: %v; want half-open", br.State())
	}
	if probe, err := br.allow(t1); !probe || err != nil {
		t.Fatalf("after a throttled probe: probe %v, %v; want a new probe", probe, err)
	}
	// A stale (non-probe) success does not close it.
	br.record(t1, false, Success, 0)
	if br.State() != HalfOpen {
		t.Fatalf("after a stale success: %v", br.State())
	}
	br.record(t1, true, Permanent, 0) // the dependency answered
	if br.State() != Closed {
		t.Fatalf("after a permanent probe: %v; want closed", br.State())
	}
}

func TestBreakerRatio(t *testing.T) {
	t0 := time.Unix(1000, 0)
	br, err := NewBreaker(BreakerOptions{FailureRatio: 0.5, MinimumThroughput: 4, SamplingDuration: 10 * time.Second, BreakDuration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	br.record(t0, false, Transient, 0)
	br.record(t0, false, Transient, 0)
	br.record(t0, false, Transient, 0) // 3 of 3, under the minimum throughput
	if br.State() != Closed {
		t.Fatal("opened under the minimum throughput")
	}
	// Ten seconds on, the failures have left the window.
	t1 := t0.Add(10 * time.Second)
	br.record(t1, false, Success, 0)
	br.record(t1, false, Success, 0)
	br.record(t1, false, Success, 0)
	br.record(t1, false, Transient, 0) // 1 of 4
	if br.State() != Closed {
		t.Fatal("opened at 25 %")
	}
	for range 100 {
		br.record(t1, false, Throttled, 0) // no evidence
	}
	br.record(t1.Add(time.Second), false, Transient, 0) // 2 of 5: 40 %
	if br.State() != Closed {
		t.Fatal("opened at 40 %")
	}
	br.record(t1.Add(2*time.Second), false, Transient, 0) // 3 of 6: 50 %
	if br.State() != Open {
		t.Fatalf("%v at 50 %%; want open", br.State())
	}
}

func TestBreakerSlowCalls(t *testing.T) {
	t0 := time.Unix(1000, 0)
	br, _ := NewBreaker(BreakerOptions{ConsecutiveFailures: 2, BreakDuration: time.Second, SlowCallThreshold: time.Second})
	br.record(t0, false, Success, 2*time.Second)
	br.record(t0, false, Throttled, 5*time.Second) // throttled: nothing, slow or not
	br.record(t0, false, Success, 1500*time.Millisecond)
	if br.State() != Open {
		t.Fatalf("%v after two slow calls; want open", br.State())
	}
}

func TestBreakerConcurrent(t *testing.T) {
	br, _ := NewBreaker(BreakerOptions{FailureRatio: 0.5, MinimumThroughput: 10, SamplingDuration: time.Second, BreakDuration: time.Millisecond})
	p, _ := bare(Options{Breaker: br})
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				_, _ = Run(context.Background(), p, func(ctx context.Context) (int, error) {
					if (i+g)%2 == 0 {
						return 0, errors.New("x")
					}
					return 1, nil
				})
			}
		})
	}
	wg.Wait()
}

func TestBreakerOptionsValidate(t *testing.T) {
	_, err := NewBreaker(BreakerOptions{FailureRatio: 2, MinimumThroughput: 1, SamplingDuration: -1,
		BreakDuration: -1, SlowCallThreshold: -1})
	want := []string{"FailureRatio", "MinimumThroughput", "SamplingDuration",
		"BreakDuration", "SlowCallThreshold"}
	if d := cmp.Diff(want, fields(err)); d != "" {
		t.Errorf("ratio mode: problems (-want +got):\n%s", d)
	}
	_, err = NewBreaker(BreakerOptions{ConsecutiveFailures: 1, FailureRatio: 0.5, SamplingDuration: time.Second})
	want = []string{"FailureRatio", "SamplingDuration"}
	if d := cmp.Diff(want, fields(err)); d != "" {
		t.Errorf("ratio fields in the consecutive mode: problems (-want +got):\n%s", d)
	}
	if _, err := NewBreaker(BreakerOptions{ConsecutiveFailures: -1}); len(fields(err)) != 1 {
		t.Errorf("ConsecutiveFailures -1: %v; want one problem", err)
	}
}

// The zero BreakerOptions is a complete configuration: Polly's breaker,
// which opens when 10 % of at least 100 calls in 30 s failed, for 5 s.
func TestBreakerZeroOptionsArePolly(t *testing.T) {
	br, err := NewBreaker(BreakerOptions{})
	if err != nil {
		t.Fatalf("BreakerOptions{}: %v", err)
	}
	t0 := time.Unix(1000, 0)
	for range 90 {
		br.record(t0, false, Success, 0)
	}
	for range 9 {
		br.record(t0, false, Transient, 0)
	}
	if br.State() != Closed {
		t.Fatalf("99 calls, 9 failed: %v; want closed (under 100 calls)", br.State())
	}
	br.record(t0.Add(29*time.Second), false, Transient, 0) // 10 of 100, inside 30 s
	if br.State() != Open {
		t.Fatalf("100 calls, 10 failed: %v; want open", br.State())
	}
	if _, err := br.allow(t0.Add(29*time.Second + 4999*time.Millisecond)); err == nil {
		t.Error("let a call through before the 5 s break ended")
	}
	if probe, err := br.allow(t0.Add(34 * time.Second)); !probe || err != nil {
		t.Errorf("after 5 s: probe %v, %v; want the probe", probe, err)
	}
}

// Two state changes on two goroutines may reach the state gauge in either
// order; the gauge must still end at the breaker's state, not at the state
// of whichever change recorded last.
func TestBreakerStateGaugeEndsAtCurrentState(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, sdk := metricstest.New(t)
		var once sync.Once
		entered, proceed := make(chan struct{}), make(chan struct{})
		hold := func(v int64) { // holds the first record of "open" until proceed
			if v == int64(Open) {
				once.Do(func() { close(entered); <-proceed })
			}
		}
		br, err := NewBreaker(BreakerOptions{Name: "api", ConsecutiveFailures: 1, BreakDuration: time.Second,
			MeterProvider: gaugeHookProvider{sdk, hold}})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Unix(1000, 0)
		go br.record(t0, false, Transient, 0) // closed -> open, held before the gauge
		<-entered
		// Meanwhile the break passes and a probe closes the breaker again.
		if probe, err := br.allow(t0.Add(time.Second)); !probe || err != nil {
			t.Fatalf("after the break: probe %v, %v; want a probe", probe, err)
		}
		br.record(t0.Add(time.Second), true, Success, 0)
		close(proceed) // the open change now reaches the gauge, last
		synctest.Wait()

		got := int64(-1)
		for _, p := range metricstest.Collect(t, r) {
			if p.Name == telemetry.BreakerStateName {
				got = int64(p.Value)
			}
		}
		if br.State() != Closed || got != int64(Closed) {
			t.Errorf("breaker %v, state gauge %d; want closed, %d", br.State(), got, Closed)
		}
	})
}

// A panic in OnStateChange on the change to half-open propagates, and does
// not keep the probe slot: Allow returned no probe for anyone to Record or
// release, so a kept slot would refuse every later call.
func TestBreakerProbeFreedWhenStateCallbackPanics(t *testing.T) {
	br, err := NewBreaker(BreakerOptions{ConsecutiveFailures: 1, BreakDuration: time.Second,
		OnStateChange: func(from, to State) {
			if to == HalfOpen {
				panic("callback bug")
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1000, 0)
	br.record(t0, false, Transient, 0) // open
	t1 := t0.Add(time.Second)
	func() {
		defer func() {
			if v := recover(); v != "callback bug" {
				t.Errorf("recovered %v; want the callback's panic", v)
			}
		}()
		_, _ = br.allow(t1)
	}()
	if probe, err := br.allow(t1); !probe || err != nil {
		t.Errorf("after the callback panicked: probe %v, %v; want a probe", probe, err)
	}
}

// gaugeHookProvider is a meter provider whose Int64Gauge.Record calls hook
// with the value before recording it.
type gaugeHookProvider struct {
	metric.MeterProvider
	hook func(int64)
}

func (p gaugeHookProvider) Meter(name string, o ...metric.MeterOption) metric.Meter {
	return gaugeHookMeter{p.MeterProvider.Meter(name, o...), p.hook}
}

type gaugeHookMeter struct {
	metric.Meter
	hook func(int64)
}

func (m gaugeHookMeter) Int64Gauge(name string, o ...metric.Int64GaugeOption) (metric.Int64Gauge, error) {
	g, err := m.Meter.Int64Gauge(name, o...)
	return gaugeHook{g, m.hook}, err
}

type gaugeHook struct {
	metric.Int64Gauge
	hook func(int64)
}

func (g gaugeHook) Record(ctx context.Context, v int64, o ...metric.RecordOption) {
	g.hook(v)
	g.Int64Gauge.Record(ctx, v, o...)
}
