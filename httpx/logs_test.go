package httpx

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// logRecords is a slog.Handler that keeps every record's level and
// message.
type logRecords struct {
	mu  sync.Mutex
	got []string
}

func (r *logRecords) Enabled(context.Context, slog.Level) bool { return true }
func (r *logRecords) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, rec.Level.String()+" "+rec.Message)
	return nil
}
func (r *logRecords) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r *logRecords) WithGroup(string) slog.Handler      { return r }

func (r *logRecords) above(l slog.Level) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, line := range r.got {
		if !strings.HasPrefix(line, "DEBUG") {
			out = append(out, line)
		}
	}
	return out
}

// A client sending at its limit, queueing for permits and never throttled,
// logs nothing above Debug.
func TestHealthyFullUseLogsNothingAboveDebug(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logRecords{}
		answer := func(r *http.Request) (*http.Response, error) {
			return respond(r, 200, "ok", nil, "X-RateLimit-Limit", "1000", "X-RateLimit-Remaining", "900", "X-RateLimit-Reset", "60"), nil
		}
		tr := mustTransport(t, WithTransport(rtFunc(answer)), WithLogger(slog.New(logs)),
			WithRateLimit(limit.Options{PermitsPerSecond: 20, QueueLimit: new(1000)}))
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 25 {
					resp, err := get(t, tr, "http://api.test/")
					if err != nil {
						t.Error(err)
						return
					}
					resp.Body.Close()
				}
			})
		}
		wg.Wait()
		if got := logs.above(slog.LevelDebug); len(got) != 0 {
			t.Errorf("healthy full use logged above Debug: %q", got)
		}
	})
}

// A storm of 429s makes one line, not one a response.
func TestThrottleStormLogsOneLine(t *testing.T) {
	logs := &logRecords{}
	answer := func(r *http.Request) (*http.Response, error) {
		return respond(r, 429, "slow down", nil, "Retry-After", "1"), nil
	}
	tr := mustTransport(t, WithTransport(rtFunc(answer)), WithoutQuotaGuard(), WithLogger(slog.New(logs)))
	for range 200 {
		resp, err := get(t, tr, "http://api.test/")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got, want := fmt.Sprint(logs.above(slog.LevelDebug)), "[INFO throttled by the server]"; got != want {
		t.Errorf("logged %s, want %s", got, want)
	}
}

// An attempt the guard holds past its reset shows on the caller's span, and
// in the log once it is held a second or more.
func TestGuardHoldOnTheSpanAndInTheLog(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		logs := &logRecords{}
		answer := func(r *http.Request) (*http.Response, error) {
			return respond(r, 200, "ok", nil, "X-RateLimit-Limit", "100", "X-RateLimit-Remaining", "0", "X-RateLimit-Reset", "3"), nil
		}
		tr := mustTransport(t, WithTransport(rtFunc(answer)), WithLogger(slog.New(logs)))
		sr := tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
		ctx, span := tp.Tracer("test").Start(context.Background(), "call")
		for range 2 {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://api.test/", nil)
			resp, err := tr.RoundTrip(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		span.End()
		holds := 0
		for _, ev := range sr.Ended()[0].Events() {
			if ev.Name == telemetry.EventGuardHold {
				holds++
			}
		}
		if holds != 1 {
			t.Errorf("%d guard hold events on the span, want 1", holds)
		}
		if got, want := fmt.Sprint(logs.above(slog.LevelDebug)), "[INFO quota guard held an attempt]"; got != want {
			t.Errorf("logged %s, want %s", got, want)
		}
		tp.Shutdown(context.Background())
	})
}
