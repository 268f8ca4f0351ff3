package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/headroom-go/headroom/internal/metricstest"
	"github.com/headroom-go/headroom/telemetry"
)

// A run is counted with whether it retried, and timed as a whole and per
// attempt, with the attempt's number: a call throttled once and then
// served is one call that succeeded after a retry, lasting its two
// attempts and the delay between them.
func TestRunRecordsDurationsAndRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r, mp := metricstest.New(t)
		p, err := Default(Options{Name: "api", MeterProvider: mp, NoBreaker: true, NoBudget: true})
		if err != nil {
			t.Fatal(err)
		}
		calls := 0
		_, err = Run(t.Context(), p, func(ctx context.Context) (int, error) {
			calls++
			time.Sleep(100 * time.Millisecond)
			if calls == 1 {
				return 0, &ThrottledError{Err: errors.New("429"), RetryAfter: time.Second}
			}
			return 1, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		_, _ = Run(t.Context(), p, func(ctx context.Context) (int, error) { return 1, nil })

		got := map[string]float64{}
		for _, p := range metricstest.Collect(t, r) {
			switch p.Name {
			case telemetry.CallsName:
				got["calls "+p.Attr(telemetry.AttrStop)+" retried="+p.Attr(telemetry.AttrRetried)] = p.Value
			case telemetry.CallDurationName:
				got["call seconds retried="+p.Attr(telemetry.AttrRetried)] = p.Sum
			case telemetry.AttemptDurationName:
				got["attempt "+p.Attr(telemetry.AttrAttempt)+" "+p.Attr(telemetry.AttrVerdict)] = p.Sum
			}
		}
		want := map[string]float64{
			"calls succeeded retried=true":  1,
			"calls succeeded retried=false": 1,
			"call seconds retried=true":     1.2,
			"call seconds retried=false":    0,
			"attempt 1 throttled":           0.1,
			"attempt 2 success":             0.1,
			"attempt 1 success":             0,
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("runner metrics (-want +got):\n%s", diff)
		}
	})
}
