package sim

import (
	"math"
	"testing"
	"time"
)

// recorder is a limiter that sends everything at once and records each
// response it hears of.
type recorder struct {
	heard []heard
}

type heard struct {
	sent, at time.Duration
	resp     response
}

func (r *recorder) acquire(time.Duration, *request) admit              { return granted }
func (r *recorder) poll(time.Duration, *pollOut) (time.Duration, bool) { return 0, false }
func (r *recorder) feedback(now time.Duration, req *request, resp *response) {
	r.heard = append(r.heard, heard{req.sent, now, *resp})
}
func (r *recorder) setInstances(time.Duration, int) {}
func (r *recorder) rate(time.Duration) float64      { return 0 }
func (r *recorder) queued() int                     { return 0 }

// TestRequestsInFlight: for every kind, the server counts a request when
// it arrives, one leg after it was sent, and the client hears of it (and
// reads its headers) one leg after the server answers: after the server's
// delay, for a request nginx holds.
func TestRequestsInFlight(t *testing.T) {
	const leg = 25 * time.Millisecond
	for _, k := range serverKinds {
		s := Server{Kind: k, Window: 10 * time.Second, Publish: publishDraft6}
		if k == kindLeakyBucket {
			s.Burst = 20 // and nginx's default: every request of the excess delayed
		}
		var rec *recorder
		mode := Mode{Name: "recorder", headers: true, newLimiter: func(limiterEnv) (limiter, error) {
			rec = &recorder{}
			return rec, nil
		}}
		cfg := Config{Instances: 1, Scenario: scenarioSteady, Duration: time.Minute, Quota: 300, Server: s,
			Latency: Latency{Min: leg, Max: leg}, Attempts: 1, NoSeries: true}
		res, err := Run(cfg, mode)
		if err != nil {
			t.Fatal(err)
		}
		delayed := 0
		for _, h := range rec.heard {
			if got, want := h.at-h.sent, 2*leg+h.resp.Delay; got != want {
				t.Fatalf("%s: sent at %v, heard at %v: %v in flight, want %v (two legs and the server's delay %v)", k, h.sent, h.at, got, want, h.resp.Delay)
			}
			if h.resp.Delay > 0 {
				delayed++
			}
		}
		// The last requests may still be in flight, or held, when the run
		// ends.
		if res.Sent < len(rec.heard) || len(rec.heard) < 1000 {
			t.Errorf("%s: %d sent, %d heard", k, res.Sent, len(rec.heard))
		}
		if (k == kindLeakyBucket) != (delayed > 0) {
			t.Errorf("%s: %d responses delayed by the server", k, delayed)
		}
	}
}

// TestAllowance: the seeds' allowance is the mean quota times the run; a
// window kind's is the quota of every window the run starts; a bucket's is
// its depth plus the refill.
func TestAllowance(t *testing.T) {
	if got := (Config{}).allowance(); got != 43500 {
		t.Errorf("seeds' allowance %v, want 43,500 (14 windows of 3,000 and one of 1,500)", got)
	}
	for _, c := range []struct {
		s    Server
		want float64
	}{
		{Server{Kind: kindFixedWindow, Window: 7 * time.Minute}, 3 * 100},             // 15 min: 3 windows started
		{Server{Kind: kindSlidingCounter, Window: 10 * time.Second}, 90 * 100},        // 90 windows
		{Server{Kind: kindTokenBucket, Window: 10 * time.Second}, 100 + 90*100},       // a window's burst and the refill
		{Server{Kind: kindTokenBucket, Window: 10 * time.Second, Burst: 7}, 7 + 9000}, // burst 7
		{Server{Kind: kindLeakyBucket, Window: 10 * time.Second, Burst: 7}, 8 + 9000}, // the one on schedule, and 7
	} {
		got := Config{Scenario: scenarioSteady, Quota: 100, Server: c.s}.allowance()
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%v: allowance %v, want %v", c.s.defaults(), got, c.want)
		}
	}
	res, err := Run(Config{Scenario: scenarioSteady, Duration: 2 * time.Minute, NoSeries: true,
		Server: Server{Kind: kindTokenBucket, Window: time.Second}, Quota: 50}, noLimiterMode())
	if err != nil {
		t.Fatal(err)
	}
	if res.Allowance != 50+120*50 || res.AllowanceShare != float64(res.Accepted)/res.Allowance || res.AllowanceShare > 1 {
		t.Errorf("no limiter on a token bucket: allowance %v, share %v of %d accepted", res.Allowance, res.AllowanceShare, res.Accepted)
	}
}
