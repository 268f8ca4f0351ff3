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
func feed(t *testing.T, s Server, schedule []quotaStep, in []arrival) []response {
	t.Helper()
	a, err := newServerAPI(s, schedule)
	if err != nil {
		t.Fatal(err)
	}
	a.publish = true
	out := make([]response, len(in))
	for i, r := range in {
		out[i] = a.handle(r.at, r.units)
	}
	return out
}

func TestServerDefaultsAreTheSeeds(t *testing.T) {
	s := Server{}.defaults()
	if s.Kind != kindSlidingLog || s.Window != time.Minute || s.Publish != publishDraft3 {
		t.Errorf("defaults %+v, want the seeds' sliding log of 60 s publishing draft-3", s)
	}
	if (Server{Kind: kindTokenBucket}).defaults() == (Server{}).defaults() {
		t.Error("a token bucket is the seeds' server")
	}
}

func TestServerValidateListsEveryProblem(t *testing.T) {
	_, err := newServerAPI(Server{Kind: "warp", Window: time.Millisecond, Publish: "smoke", Burst: -1, Delay: -2}, []quotaStep{{0, 10}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"Server.Kind = warp", "Server.Publish = smoke", "Server.Window = 1ms", "Server.Burst = -1", "Server.Delay = -2"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	_, err = newServerAPI(Server{Kind: kindFixedWindow, Burst: 5, NoDelay: true, Delay: 3, UnitReset: true, Publish: publishDraft6, EpochCeil: true}, []quotaStep{{0, 10}})
	for _, want := range []string{"Server.Burst = 5: want 0: only token-bucket and leaky-bucket", "Server.NoDelay = true: want false: nodelay is nginx's",
		"Server.Delay = 3: want 0: delay is nginx's", "Server.Delay = 3: want 0 with NoDelay", "Server.UnitReset = true", "Server.EpochCeil = true"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := newServerAPI(Server{Kind: kindSlidingLog, Aligned: true}, nil); err == nil || !strings.Contains(err.Error(), "aligned windows") {
		t.Errorf("aligned sliding log: %v", err)
	}
	// nginx cannot express a rate below a thousandth of a unit a second.
	if _, err := newServerAPI(Server{Kind: kindLeakyBucket, Window: 24 * time.Hour}, []quotaStep{{0, 50}}); err == nil || !strings.Contains(err.Error(), "nginx's smallest rate") {
		t.Errorf("leaky bucket of 50 a day: %v", err)
	}
	if _, err := newServerAPI(Server{Kind: kindTokenBucket, Burst: 1 << 40, Window: time.Hour}, []quotaStep{{0, 50}}); err == nil || !strings.Contains(err.Error(), "too large") {
		t.Errorf("token bucket of 2^40 units an hour: %v", err)
	}
	// A whole Config lists the server's problems with its own.
	err = Config{Instances: -1, Server: Server{Kind: kindFixedWindow, Burst: 3}}.Defaults().Validate()
	if err == nil || !strings.Contains(err.Error(), "Instances = -1") || !strings.Contains(err.Error(), "Server.Burst = 3") {
		t.Errorf("config: %v", err)
	}
}

// TestEveryKindRetryAfterIsWhenItFits: for every kind, a refused request
// sent again after its Retry-After, with nothing else in between, is
// accepted — and a second earlier it would not have been, when the
// Retry-After is more than a second (the wait is the first whole second at
// which it fits).
func TestEveryKindRetryAfterIsWhenItFits(t *testing.T) {
	checked := map[string]int{}
	for _, k := range serverKinds {
		for seed := range uint64(50) {
			s := Server{Kind: k, Window: 10 * time.Second, Publish: publishRetryAfter}
			if takesBurst(k) {
				s.Burst = 5
			}
			in := traffic(seed, 60*time.Second, s.Window, 5)
			a, err := newServerAPI(s, []quotaStep{{0, 40}})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range in {
				resp := a.handle(r.at, r.units)
				if resp.Status == 200 || i+1 == len(in) || in[i+1].at < r.at+resp.RetryAfter {
					continue
				}
				// Nothing arrives before the Retry-After: try a copy of the
				// API at that instant, and a second before it.
				if resp.RetryAfter > time.Second {
					early := cloneAPI(t, s, in[:i+1])
					if got := early.handle(r.at+resp.RetryAfter-time.Second, r.units); got.Status == 200 {
						t.Errorf("%s seed %d: %d units at %v: Retry-After %v, but accepted a second earlier", k, seed, r.units, r.at, resp.RetryAfter)
					}
				}
				checked[k]++
				later := cloneAPI(t, s, in[:i+1])
				if got := later.handle(r.at+resp.RetryAfter, r.units); got.Status != 200 {
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
func cloneAPI(t *testing.T, s Server, in []arrival) *modelAPI {
	t.Helper()
	a, err := newServerAPI(s, []quotaStep{{0, 40}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range in {
		a.handle(r.at, r.units)
	}
	return a
}
