package httpx

import (
	"errors"
	"strings"
	"testing"

	"github.com/headroom-go/headroom"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/limit/adaptive"
	"github.com/headroom-go/headroom/limit/quota"
	"github.com/headroom-go/headroom/resilience"
)

func TestLimiterOutsideTheRetriesRefused(t *testing.T) {
	lim := limit.Options{PermitsPerSecond: 100}
	_, err := NewClient(
		WithRateLimit(lim),
		WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))),
	)
	var ce *headroom.ConfigError
	if !errors.As(err, &ce) {
		t.Fatalf("NewClient(WithRateLimit, WithResilience) = %v, want a *headroom.ConfigError", err)
	}
	if ce.Field != "WithRateLimit" || ce.Value != "listed before WithResilience" {
		t.Errorf("ConfigError = %+v", ce)
	}
	if !errors.Is(err, headroom.ErrConfig) {
		t.Error("errors.Is(err, headroom.ErrConfig) = false")
	}
	if !strings.Contains(err.Error(), "want after WithResilience") {
		t.Errorf("error %q does not name the fix", err)
	}

	// The right order builds.
	if _, err := NewClient(WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))), WithRateLimit(lim)); err != nil {
		t.Fatalf("NewClient(WithResilience, WithRateLimit) = %v", err)
	}
}

func TestEveryLimiterLayerOutsideTheRetriesRefused(t *testing.T) {
	l, err := limit.PerSecond(10, 10)
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewTransport(
		WithRateLimit(limit.Options{AdaptiveRate: &adaptive.RateConfig{}}),
		WithLimiter(l),
		WithQuotaGuard(quota.Options{}),
		WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))),
		WithRateLimit(limit.Options{Concurrency: 4}), // fine: inside
	)
	var layers []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var ce *headroom.ConfigError
		if errors.As(e, &ce) && ce.Value == "listed before WithResilience" {
			layers = append(layers, ce.Field)
		}
	}
	want := []string{"WithRateLimit", "WithLimiter", "WithQuotaGuard"}
	if strings.Join(layers, ",") != strings.Join(want, ",") {
		t.Errorf("order errors for %v, want %v (err: %v)", layers, want, err)
	}
}

func TestNoResilienceLayerIsNoOrderProblem(t *testing.T) {
	if _, err := NewTransport(WithRateLimit(limit.Options{PermitsPerSecond: 1})); err != nil {
		t.Fatalf("a limiter without a resilience layer: %v", err)
	}
}

func TestConfigProblemsListedAtOnce(t *testing.T) {
	_, err := NewTransport(
		WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))),
		WithResilience(policyOnly(resilience.HTTP(resilience.Options{}))),
		WithRateLimit(limit.Options{PermitsPerSecond: 100, Concurrency: 20}), // two shapes
		WithResilience(nil),
		WithQuotaGuard(quota.Options{ReserveFraction: new(-1.0)}),
	)
	if err == nil {
		t.Fatal("no error")
	}
	var ce *headroom.ConfigError
	var le *headroom.ConfigError
	if !errors.As(err, &ce) || !errors.As(err, &le) {
		t.Errorf("err = %v; want a *headroom.ConfigError and a *headroom.ConfigError among its problems", err)
	}
	if n := len(err.(interface{ Unwrap() []error }).Unwrap()); n < 4 {
		t.Errorf("%d problems listed, want at least 4: %v", n, err)
	}
}
