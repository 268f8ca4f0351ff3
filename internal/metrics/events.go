package metrics

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
)

// summaryWindow is how often one event of one subject is logged at most:
// the first of a window is logged at once, the rest are counted and their
// number rides on the first line of the next window ("repeated"), so that a
// storm of 429s makes a line a minute, not a line a request.
const summaryWindow = time.Minute

// maxSubjects bounds the events a log remembers; past it, it forgets them
// all and starts again, which at worst logs a line early.
const maxSubjects = 1024

// Events writes a recorder's notable events (a throttle, a pause, a
// breaker's transition, a fallback) to a *slog.Logger, summarising repeats
// (summaryWindow). A nil *Events, or one without a logger, logs nothing and
// costs a nil check.
type Events struct {
	log   *slog.Logger
	attrs []slog.Attr // who: the limiter's, runner's or fleet's name

	mu   sync.Mutex
	seen map[string]*burst
}

type burst struct {
	since      time.Time
	suppressed int
}

// NewEvents is the log of the recorder whose attributes are attrs, on l;
// nil l logs nothing.
func NewEvents(l *slog.Logger, attrs ...slog.Attr) *Events {
	if l == nil {
		return nil
	}
	return &Events{log: l, attrs: attrs, seen: make(map[string]*burst)}
}

// Log writes msg about subject (a host, a key; "" for the recorder
// itself) at level with attrs, unless the same msg about the same subject
// was written within summaryWindow: then it only counts it.
func (e *Events) Log(ctx context.Context, level slog.Level, msg, subject string, attrs ...slog.Attr) {
	if e == nil || !e.log.Enabled(ctx, level) {
		return
	}
	now := time.Now()
	key := msg + "\x00" + subject
	e.mu.Lock()
	b := e.seen[key]
	if b != nil && now.Sub(b.since) < summaryWindow {
		b.suppressed++
		e.mu.Unlock()
		return
	}
	suppressed := 0
	if b != nil {
		suppressed = b.suppressed
	}
	if len(e.seen) >= maxSubjects {
		clear(e.seen)
	}
	e.seen[key] = &burst{since: now}
	e.mu.Unlock()
	all := make([]slog.Attr, 0, len(e.attrs)+len(attrs)+1)
	all = append(append(all, e.attrs...), attrs...)
	if suppressed > 0 {
		all = append(all, slog.Int("repeated", suppressed))
	}
	e.log.LogAttrs(ctx, level, msg, all...)
}

// SpanEvent adds the event name with attrs to the span in ctx, when that
// span is recording; otherwise it costs a context lookup.
func SpanEvent(ctx context.Context, name string, attrs ...attribute.KeyValue) {
	if span := trace.SpanFromContext(ctx); span.IsRecording() {
		span.AddEvent(name, trace.WithAttributes(attrs...))
	}
}
