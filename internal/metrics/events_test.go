package metrics

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/headroom-go/headroom/telemetry"
)

// records is a slog.Handler that keeps what it is given.
type records struct {
	mu    sync.Mutex
	level slog.Level
	got   []slog.Record
}

func (r *records) Enabled(_ context.Context, l slog.Level) bool { return l >= r.level }
func (r *records) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec)
	return nil
}
func (r *records) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *records) WithGroup(string) slog.Handler      { return r }

func (r *records) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, rec := range r.got {
		line := rec.Level.String() + " " + rec.Message
		rec.Attrs(func(a slog.Attr) bool {
			line += " " + a.String()
			return true
		})
		out = append(out, line)
	}
	return out
}

// A storm of one event makes one line a minute, the next line saying how
// many were left out; another subject is logged apart.
func TestEventsSummariseRepeats(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := &records{level: slog.LevelDebug}
		e := NewEvents(slog.New(h), slog.String(telemetry.AttrLimiter, "api"))
		ctx := context.Background()
		for range 500 {
			e.Log(ctx, slog.LevelInfo, "throttled by the server", "a.test")
		}
		e.Log(ctx, slog.LevelInfo, "throttled by the server", "b.test")
		time.Sleep(summaryWindow)
		e.Log(ctx, slog.LevelInfo, "throttled by the server", "a.test")
		want := []string{
			"INFO throttled by the server headroom.limiter=api",
			"INFO throttled by the server headroom.limiter=api",
			"INFO throttled by the server headroom.limiter=api repeated=499",
		}
		if diff := cmp.Diff(want, h.lines()); diff != "" {
			t.Errorf("lines (-want +got):\n%s", diff)
		}
	})
}

// Nothing is logged below the handler's level, nor without a logger.
func TestEventsRespectTheLevel(t *testing.T) {
	h := &records{level: slog.LevelInfo}
	l := NewLimiter(nil, "x", KindAdaptiveRate)
	defer l.Close()
	l.Log(slog.New(h))
	l.Cut()    // Debug
	l.Paused() // Info
	if diff := cmp.Diff([]string{"INFO limiter paused after a Retry-After headroom.limiter=x"}, h.lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	var none *Events
	none.Log(context.Background(), slog.LevelError, "nothing", "") // no logger: no panic, no line
	if NewEvents(nil) != nil {
		t.Error("NewEvents(nil) is not nil")
	}
}

// The wait, the throttled attempt and the retry land on the caller's span,
// with the attempt's number.
func TestSpanEventsOnTheCallersSpan(t *testing.T) {
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	defer tp.Shutdown(context.Background())
	ctx, span := tp.Tracer("test").Start(context.Background(), "call")

	l := NewLimiter(nil, "api", KindPerSecond)
	defer l.Close()
	l.Waited(ctx, 250*time.Millisecond)
	r := NewRunner(nil, "runner")
	r.Throttle(ctx, 1, false, 2*time.Second)
	r.Retry(ctx, 2, false, 2*time.Second, 1)
	r.Throttle(context.Background(), 9, false, 0) // no span: nothing, and no panic
	span.End()

	var got []string
	for _, s := range sr.Ended() {
		for _, ev := range s.Events() {
			line := ev.Name
			for _, a := range ev.Attributes {
				line += " " + string(a.Key) + "=" + a.Value.String()
			}
			got = append(got, line)
		}
	}
	want := []string{
		"headroom.limiter.wait headroom.limiter=api headroom.wait.duration=0.25",
		"headroom.attempt.throttled headroom.attempt=1 headroom.self_imposed=false headroom.retry_after=2",
		"headroom.retry headroom.attempt=1 headroom.verdict=throttled headroom.retry.delay=2",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("span events (-want +got):\n%s", diff)
	}
}

// A fleet falling open logs once for a storm of requests, and its recovery
// once; a fleet that never fell back logs no recovery.
func TestFleetFailingOpenAndRecovering(t *testing.T) {
	h := &records{level: slog.LevelDebug}
	f := NewFleetLog(nil, "shared", slog.New(h))
	ctx := context.Background()
	f.Answered(ctx)
	for range 100 {
		f.FellBack(ctx, true)
	}
	f.Answered(ctx)
	f.Answered(ctx)
	f.FellBack(ctx, false)
	want := []string{
		"WARN fleet: Redis out of reach, failing open on this process's share headroom.limiter=shared",
		"INFO fleet: Redis answers again; deciding through Redis headroom.limiter=shared",
		"ERROR fleet: Redis out of reach, failing closed: refusing requests headroom.limiter=shared",
	}
	if diff := cmp.Diff(want, h.lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}

// A breaker's opening is a warning, its closing information.
func TestBreakerTransitionsLogged(t *testing.T) {
	h := &records{level: slog.LevelDebug}
	b := NewBreaker(nil, "api")
	b.Log(slog.New(h), "api")
	b.Entered(context.Background(), BreakerOpen)
	b.Entered(context.Background(), BreakerHalfOpen)
	b.Entered(context.Background(), BreakerClosed)
	want := []string{
		"WARN circuit breaker open headroom.runner=api headroom.breaker.state=open",
		"INFO circuit breaker half_open headroom.runner=api headroom.breaker.state=half_open",
		"INFO circuit breaker closed headroom.runner=api headroom.breaker.state=closed",
	}
	if diff := cmp.Diff(want, h.lines()); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
}
