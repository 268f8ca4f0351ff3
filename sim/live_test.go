package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// liveConfigs are short runs through the drop, the recovery and the join,
// and a server of another kind, to keep the race-enabled suite quick.
func liveConfigs() []Config {
	return []Config{
		{Scenario: scenarioDrop, Duration: 150 * time.Second, DropAt: time.Minute},
		{Scenario: scenarioJoin, Duration: 100 * time.Second, JoinAt: 40 * time.Second},
		{Scenario: scenarioSteady, Duration: 90 * time.Second, Quota: 50,
			Server: Server{Kind: kindTokenBucket, Window: time.Second, Burst: 20, Publish: publishDraft6}},
	}
}

// A live run advanced in steps of any size, however its figures are read
// on the way, ends with the Result Run gives: the page shows the run the
// command measures.
func TestLiveEndsWithRunsResult(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 1))
	for _, cfg := range liveConfigs() {
		for _, m := range Modes() {
			want, err := Run(cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			l, err := NewLive(cfg, m)
			if err != nil {
				t.Fatal(err)
			}
			for !l.Done() {
				l.Advance(l.Now() + time.Duration(rng.Int64N(int64(20*time.Second))))
				l.Gauges()
				l.Samples(0)
			}
			got, err := l.Result()
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("%s/%s: the live run's result differs from Run's (-Run +live):\n%s", m.Name, cfg.Scenario, d)
			}
		}
	}
}

// The samples are Run's Series, second for second, with each instance's
// rate besides: the rates add up to the Series' sum, the quota is the
// Series' per minute, and the accepted units and 429s are those the
// Series counts over the seconds before.
func TestLiveSamplesAreRunsSeries(t *testing.T) {
	for _, cfg := range liveConfigs() {
		m, _ := ModeNamed("cubic+quota")
		l, err := NewLive(cfg, m)
		if err != nil {
			t.Fatal(err)
		}
		res, err := l.Result()
		if err != nil {
			t.Fatal(err)
		}
		samples := l.Samples(0)
		if len(samples) != len(res.Series) {
			t.Fatalf("%s: %d samples, %d in the series", cfg.Scenario, len(samples), len(res.Series))
		}
		perMinute := float64(time.Minute) / float64(cfg.Defaults().Server.Window)
		for i, s := range samples {
			want := res.Series[i]
			sum := 0.0
			for _, r := range s.Rates {
				sum += r
			}
			accepted := 0
			for _, p := range res.Series[max(i-60, 0):i] {
				accepted += p.Accepted
			}
			throttled := 0
			if i > 0 {
				throttled = res.Series[i-1].Throttled
			}
			if s.At != want.At || sum != want.Rate || s.Rate != want.Rate || s.Queued != want.Queued ||
				s.Quota != float64(want.Quota)*perMinute || s.Accepted != accepted || s.Throttled != throttled {
				t.Fatalf("%s: sample %d = %+v (rates adding to %v); the series has %+v, %d accepted in the minute before, %d 429s in the second before",
					cfg.Scenario, i, s, sum, want, accepted, throttled)
			}
		}
		if got := len(samples[len(samples)-1].Rates); got != cfg.Defaults().Instances+boolInt(cfg.Scenario == scenarioJoin) {
			t.Errorf("%s: %d rates at the end", cfg.Scenario, got)
		}
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// The gauges count what the run has done so far, and at the end they are
// the Result's figures.
func TestLiveGauges(t *testing.T) {
	cfg := liveConfigs()[0]
	m, _ := ModeNamed("aimd")
	l, err := NewLive(cfg, m)
	if err != nil {
		t.Fatal(err)
	}
	if g := l.Gauges(); g != (Gauges{Instances: 2, Rate: 2 * 1125 / 2, Quota: 3000}) {
		t.Errorf("at 0: %+v; want two instances at their initial rate and nothing counted", g)
	}
	var last Gauges
	for l.Advance(l.Now() + 7*time.Second); !l.Done(); l.Advance(l.Now() + 7*time.Second) {
		g := l.Gauges()
		if g.At != l.Now() || g.Throttled < last.Throttled || g.Rejected < last.Rejected || g.GaveUp < last.GaveUp {
			t.Fatalf("at %v: %+v after %+v", l.Now(), g, last)
		}
		last = g
	}
	res, _ := l.Result()
	g := l.Gauges()
	accepted := 0
	for _, s := range res.Series[len(res.Series)-60:] {
		accepted += s.Accepted
	}
	want := Gauges{At: cfg.Duration, Accepted: accepted, Rate: g.Rate, Instances: 2, Quota: 3000, Throttled: res.Throttled,
		Rejected: res.Rejected, GaveUp: res.GaveUp, Queued: g.Queued, P95Wait: res.P95Wait}
	if g != want {
		t.Errorf("at the end: %+v; want %+v", g, want)
	}
	if res.Throttled == 0 || accepted == 0 {
		t.Errorf("the run measured nothing: %+v", g)
	}
}

// Advancing backwards, or past the end, does nothing more than advancing
// to the end; a bad configuration is Run's error.
func TestLiveAdvanceBounds(t *testing.T) {
	m, _ := ModeNamed("cubic")
	l, err := NewLive(Config{Scenario: scenarioSteady, Duration: 30 * time.Second}, m)
	if err != nil {
		t.Fatal(err)
	}
	l.Advance(10 * time.Second)
	l.Advance(5 * time.Second)
	if l.Now() != 10*time.Second || l.Done() || len(l.Samples(0)) != 10 || len(l.Samples(8)) != 2 || len(l.Samples(99)) != 0 {
		t.Fatalf("after 10 s then 5 s: now %v, done %v, %d samples", l.Now(), l.Done(), len(l.Samples(0)))
	}
	l.Advance(time.Hour)
	if l.Now() != 30*time.Second || !l.Done() || l.Err() != nil {
		t.Fatalf("past the end: now %v, done %v, err %v", l.Now(), l.Done(), l.Err())
	}
	if _, err := NewLive(Config{Instances: -1}, m); err == nil {
		t.Error("NewLive took -1 instances")
	}
	if _, err := NewLive(Config{}, Mode{Name: "none"}); err == nil {
		t.Error("NewLive took a mode without a limiter")
	}
}
