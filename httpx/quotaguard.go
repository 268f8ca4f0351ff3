package httpx

import (
	"context"
	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"log/slog"
	"net/http"
	"time"

	"github.com/headroom-go/headroom/limit/quota"
)

// guardLayer is the quota guard: before an attempt it holds it, up to its
// deadline, while the key's published quota has no room for it (refusing
// instead with quota.Options.RefuseAtOnce), or while a Retry-After or a
// backoff blocks the key; after it, it reads what the response published.
// It counts an attempt's units as the limiter layer outside it estimated
// them (LimiterOption WithCost), so that a server counting resource units or
// tokens is counted alike; both read the attempt's record (attempt).
//
// Published figures win over learning. When an adaptive rate limiter paced
// the attempt, the guard hands it the published quota after each response
// (AdaptiveRateLimiter.SetPublishedLimit): the limiter then paces at its
// share of the published rate instead of learning one, and learns again
// from there when the server stops publishing. Its throttles without hints
// are the limiter's to answer (quota.Response.Paced), so the guard does not
// also back the host off.
type guardLayer struct {
	next http.RoundTripper
	g    *quota.Guard
	// shared, when not nil, is the quota the processes share (WithSharedQuota).
	shared SharedQuota
	events *metrics.Events // WithLogger's: the long holds
}

// holdNoticed is the shortest hold the guard layer adds to the caller's
// span, and holdLogged the shortest it logs: an attempt let through at
// once takes microseconds, and a hold of a second or more is one an
// operator would want to see.
const (
	holdNoticed = time.Millisecond
	holdLogged  = time.Second
)

// held reports a hold of the attempt for key that began at start and
// ended when its slot was sent.
func (l *guardLayer) held(ctx context.Context, key string, start, sent time.Time) {
	d := sent.Sub(start)
	if d < holdNoticed {
		return
	}
	metrics.SpanEvent(ctx, telemetry.EventGuardHold, attribute.String(telemetry.AttrQuotaKey, key),
		attribute.Float64(telemetry.AttrWaitDuration, d.Seconds()))
	if d >= holdLogged {
		l.events.Log(ctx, slog.LevelInfo, "quota guard held an attempt", key,
			slog.String(telemetry.AttrQuotaKey, key), slog.Duration("held", d))
	}
}

func (l *guardLayer) RoundTrip(req *http.Request) (*http.Response, error) {
	key := l.g.Key(req)
	a := attemptIn(req.Context())
	rate, cost := a.pacedBy(), a.units()
	// The clock is read before the wait only when someone would hear of
	// a hold: a logger or a recording span.
	var start time.Time
	if l.events != nil || trace.SpanFromContext(req.Context()).IsRecording() {
		start = time.Now()
	}
	slot, err := l.g.Acquire(req.Context(), key, cost)
	if err != nil {
		closeRequestBody(req)
		return nil, err
	}
	if !start.IsZero() {
		l.held(req.Context(), key, start, slot.Sent())
	}
	// Deferred, so that a panic below does not keep the slot for ever; and
	// after Observe, so that the attempt it admits next reads this
	// response's quota.
	defer slot.Release()
	if l.shared != nil {
		if err := l.shared.Acquire(req.Context(), key, cost); err != nil {
			closeRequestBody(req)
			return nil, err
		}
	}
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	published := quota.Response{Status: resp.StatusCode, Header: resp.Header, Sent: slot.Sent(), Cost: cost, Paced: rate != nil}
	l.g.Observe(key, published, now)
	if l.shared != nil {
		// A view that cannot be reached has said so through its failure
		// policy at Acquire; the response stands either way.
		_ = l.shared.Observe(req.Context(), key, published, now)
	}
	if rate != nil {
		// Nothing known lifts the quota: an API that publishes only near its
		// limit would otherwise pin the rate where it last spoke.
		st, _ := l.g.State(key, now)
		if st.Known {
			rate.SetPublishedLimit(float64(st.Limit), st.Window)
		} else {
			rate.SetPublishedLimit(0, 0)
		}
	}
	return resp, nil
}
