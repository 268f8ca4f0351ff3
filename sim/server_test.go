package sim

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// arrival is one request of a property test.
type arrival struct {
	at    time.Duration
	units int
}

// traffic is a deterministic stream of requests of 1 to maxUnits units
// over d: bursts of simultaneous requests, gaps of a few milliseconds, and
// idle stretches of up to two windows, so that every kind meets its edges.
func traffic(seed uint64, d, window time.Duration, maxUnits int) []arrival {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []arrival
	for t := time.Duration(0); t < d; {
		out = append(out, arrival{t, 1 + rng.IntN(maxUnits)})
		switch rng.IntN(10) {
		case 0: // a burst: the next one at the same instant
		case 1:
			t += time.Duration(rng.Int64N(int64(2 * window))) // idle
		default:
			t += time.Duration(rng.Int64N(int64(window / 20)))
		}
	}
	return out
}

// accepted feeds the arrivals to a fresh API limited by s under schedule
// and returns them with what the API answered.
func feed(t *testing.T, s Server, schedule []QuotaStep, in []arrival) []Response {
	t.Helper()
	a, err := NewServerAPI(s, schedule)
	if err != nil {
		t.Fatal(err)
	}
	a.Publish = true
	out := make([]Response, len(in))
	for i, r := range in {
		out[i] = a.Handle(r.at, r.units)
	}
	return out
}

func TestServerDefaultsAreTheSeeds(t *testing.T) {
	s := Server{}.Defaults()
	if s.Kind != SlidingLog || s.Window != time.Minute || s.Publish != PublishDraft3 || !s.IsSeeds() {
		t.Errorf("defaults %+v, want the seeds' sliding log of 60 s publishing draft-3", s)
	}
	if (Server{Kind: TokenBucket}).Defaults().IsSeeds() {
		t.Error("a token bucket is the seeds' server")
	}
}

func TestServerValidateListsEveryProblem(t *testing.T) {
	_, err := NewServerAPI(Server{Kind: "warp", Window: time.Millisecond, Publish: "smoke", Burst: -1, Delay: -2}, []QuotaStep{{0, 10}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{`kind "warp"`, `publish "smoke"`, "window 1ms", "burst -1", "delay -2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	_, err = NewServerAPI(Server{Kind: FixedWindow, Burst: 5, NoDelay: true, Delay: 3, UnitReset: true, Publish: PublishDraft6, EpochCeil: true}, []QuotaStep{{0, 10}})
	for _, want := range []string{"burst 5: only token-bucket and leaky-bucket", "nodelay and delay are nginx's", "nodelay and delay=3", "reset at one unit", "epoch reset rounded up"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := NewServerAPI(Server{Kind: SlidingLog, Aligned: true}, nil); err == nil || !strings.Contains(err.Error(), "aligned windows") {
		t.Errorf("aligned sliding log: %v", err)
	}
	// nginx cannot express a rate below a thousandth of a unit a second.
	if _, err := NewServerAPI(Server{Kind: LeakyBucket, Window: 24 * time.Hour}, []QuotaStep{{0, 50}}); err == nil || !strings.Contains(err.Error(), "nginx's smallest rate") {
		t.Errorf("leaky bucket of 50 a day: %v", err)
	}
	if _, err := NewServerAPI(Server{Kind: TokenBucket, Burst: 1 << 40, Window: time.Hour}, []QuotaStep{{0, 50}}); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("token bucket of 2^40 units an hour: %v", err)
	}
	// A whole Config lists the server's problems with its own.
	err = Config{Instances: -1, Server: Server{Kind: FixedWindow, Burst: 3}}.Defaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "instances") || !strings.Contains(err.Error(), "burst 3") {
		t.Errorf("config: %v", err)
	}
}

func TestNamesAreForgiving(t *testing.T) {
	for name, want := range map[string]ServerKind{"fixed": FixedWindow, "Fixed_Window": FixedWindow, "sliding log": SlidingLog,
		"SLIDING-COUNTER": SlidingCounter, "tokenbucket": TokenBucket, "leaky-bucket": LeakyBucket} {
		if k, err := ServerKindNamed(name); err != nil || k != want {
			t.Errorf("%q: %v %v, want %v", name, k, err, want)
		}
	}
	for name, want := range map[string]Publish{"draft6": PublishDraft6, "Draft-3": PublishDraft3, "x_ratelimit": PublishXRateLimit,
		"retryafter": PublishRetryAfter, "none": PublishNone} {
		if p, err := PublishNamed(name); err != nil || p != want {
			t.Errorf("%q: %v %v, want %v", name, p, err, want)
		}
	}
	if _, err := ServerKindNamed("gcra"); err == nil || !strings.Contains(err.Error(), "token-bucket") {
		t.Errorf("gcra: %v", err)
	}
	if _, err := PublishNamed("draft-8"); err == nil || !strings.Contains(err.Error(), "x-ratelimit") {
		t.Errorf("draft-8: %v", err)
	}
}

// TestEveryKindRetryAfterIsWhenItFits: for every kind, a refused request
// sent again after its Retry-After, with nothing else in between, is
// accepted — and a second earlier it would not have been, when the
// Retry-After is more than a second (the wait is the first whole second at
// which it fits).
func TestEveryKindRetryAfterIsWhenItFits(t *testing.T) {
	checked := map[ServerKind]int{}
	for _, k := range ServerKinds {
		for seed := range uint64(50) {
			s := Server{Kind: k, Window: 10 * time.Second, Publish: PublishRetryAfter}
			if k.takesBurst() {
				s.Burst = 5
			}
			in := traffic(seed, 60*time.Second, s.Window, 5)
			a, err := NewServerAPI(s, []QuotaStep{{0, 40}})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range in {
				resp := a.Handle(r.at, r.units)
				if resp.Status == 200 || i+1 == len(in) || in[i+1].at < r.at+resp.RetryAfter {
					continue
				}
				// Nothing arrives before the Retry-After: try a copy of the
				// API at that instant, and a second before it.
				if resp.RetryAfter > time.Second {
					early := cloneAPI(t, s, in[:i+1])
					if got := early.Handle(r.at+resp.RetryAfter-time.Second, r.units); got.Status == 200 {
						t.Errorf("%s seed %d: %d units at %v: Retry-After %v, but accepted a second earlier", k, seed, r.units, r.at, resp.RetryAfter)
					}
				}
				checked[k]++
				later := cloneAPI(t, s, in[:i+1])
				if got := later.Handle(r.at+resp.RetryAfter, r.units); got.Status != 200 {
					t.Errorf("%s seed %d: %d units at %v: Retry-After %v, but refused then", k, seed, r.units, r.at, resp.RetryAfter)
				}
			}
		}
		if checked[k] < 20 {
			t.Errorf("%s: only %d refusals were followed by a quiet Retry-After", k, checked[k])
		}
	}
	t.Logf("refusals checked: %v", checked)
}

// cloneAPI replays in on a fresh API of s (quota 40 per window).
func cloneAPI(t *testing.T, s Server, in []arrival) *API {
	t.Helper()
	a, err := NewServerAPI(s, []QuotaStep{{0, 40}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in {
		a.Handle(r.at, r.units)
	}
	return a
}
