package sim

import (
	"net/http"
	"testing"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

const s = time.Second

// newSeedsAPI returns the seeds' model API — an exact sliding window of
// 60 s that publishes draft-03 headers from 80% of the quota, when publish
// is set — with a quota schedule. The first step's time is taken as 0.
func newSeedsAPI(schedule []quotaStep) *modelAPI {
	api, err := newServerAPI(Server{}, schedule)
	if err != nil {
		panic(err)
	}
	return api
}

// newServerAPI returns a model API limited by srv (defaults applied) with
// a quota schedule of units per srv.Window; the first step's time is taken
// as 0. It lists every problem with srv at once.
func newServerAPI(srv Server, schedule []quotaStep) (*modelAPI, error) {
	srv = srv.defaults()
	steps := append([]quotaStep(nil), schedule...)
	if len(steps) == 0 {
		steps = []quotaStep{{Units: 0}}
	}
	steps[0].At = 0
	l := problems.New("sim")
	if srv.check(l.At("Server"), steps, 1); l.Len() > 0 {
		return nil, l.Err()
	}
	return newAPI(srv, steps), nil
}

func TestAPISlidingWindowIsExact(t *testing.T) {
	a := newSeedsAPI([]quotaStep{{0, 10}})
	steps := []struct {
		at     time.Duration
		units  int
		status int
		retry  time.Duration
	}{
		{0, 4, 200, 0},
		{10 * s, 5, 200, 0},
		{20 * s, 2, 429, 40 * s},                     // 9 used; room when the 4 of t=0 leave at 60 s
		{20 * s, 1, 200, 0},                          // exactly at the quota
		{59*s + 999*time.Millisecond, 1, 429, 1 * s}, // 1 ms short: rounded up to 1 s
		{60 * s, 1, 200, 0},                          // t=0 left at exactly 60 s: (now-60s, now]
		{60 * s, 3, 200, 0},                          // 6+4 = 10
		{65 * s, 6, 429, 15 * s},                     // room at 80 s: the 5 of t=10 and the 1 of t=20 must leave
		{69*s + 500*time.Millisecond, 5, 429, 1 * s}, // 0.5 s rounds up
		{70 * s, 5, 200, 0},
		{80 * s, 11, 429, 60 * s}, // more than the whole quota: never; says a window
	}
	for i, st := range steps {
		r := a.handle(st.at, st.units)
		if r.Status != st.status || r.RetryAfter != st.retry {
			t.Fatalf("step %d at %v: %d units: got %d Retry-After %v, want %d %v", i, st.at, st.units, r.Status, r.RetryAfter, st.status, st.retry)
		}
		if r.Header != nil {
			t.Fatalf("step %d: headers without Publish", i)
		}
	}
	if got := a.used(80 * s); got != 9 { // the 1 of t=20 left at 80 s
		t.Errorf("used at 80 s = %d, want 9", got)
	}
	if got := a.used(130 * s); got != 0 {
		t.Errorf("used at 130 s = %d, want 0", got)
	}
}

func TestAPIRetryAfterIsWhenThereIsRoom(t *testing.T) {
	// Many small entries: the Retry-After must point at the first time the
	// request fits, and a request sent then must be accepted.
	a := newSeedsAPI([]quotaStep{{0, 100}})
	for i := range 100 {
		if r := a.handle(time.Duration(i)*300*time.Millisecond, 1); r.Status != 200 {
			t.Fatalf("fill %d: %d", i, r.Status)
		}
	}
	now := 30 * s
	r := a.handle(now, 5)
	// The 5th entry (t = 1.2 s) leaves at 61.2 s: 31.2 s from now → 32 s.
	if r.Status != 429 || r.RetryAfter != 32*s {
		t.Fatalf("got %d %v, want 429 32s", r.Status, r.RetryAfter)
	}
	if r := a.handle(now+r.RetryAfter-time.Second, 5); r.Status != 429 {
		t.Fatalf("a second early: got %d, want 429", r.Status)
	}
	if r := a.handle(now+r.RetryAfter, 5); r.Status != 200 {
		t.Fatalf("after Retry-After: got %d, want 200", r.Status)
	}
}

func TestAPIQuotaSchedule(t *testing.T) {
	a := newSeedsAPI([]quotaStep{{0, 10}, {60 * s, 5}, {120 * s, 10}})
	for _, c := range []struct {
		at   time.Duration
		want int
	}{{0, 10}, {59 * s, 10}, {60 * s, 5}, {119 * s, 5}, {120 * s, 10}, {time.Hour, 10}} {
		if got := a.quotaAt(c.at); got != c.want {
			t.Errorf("quota at %v = %d, want %d", c.at, got, c.want)
		}
	}
	a.handle(50*s, 8)
	if r := a.handle(61*s, 1); r.Status != 429 || r.RetryAfter != 49*s {
		t.Errorf("8 used under a quota of 5: got %d %v, want 429 49s", r.Status, r.RetryAfter)
	}
}

func TestAPIPublishesDraft03Headers(t *testing.T) {
	a := newSeedsAPI([]quotaStep{{0, 100}})
	a.publish = true
	if r := a.handle(0, 79); r.Header != nil {
		t.Fatalf("79%% used: headers %v, want none (SharePoint sends them from 80%%)", r.Header)
	}
	r := a.handle(10*s, 1)
	want := http.Header{"Ratelimit-Limit": {"100"}, "Ratelimit-Remaining": {"20"}, "Ratelimit-Reset": {"50"}}
	for k, v := range want {
		if got := r.Header.Values(k); len(got) != 1 || got[0] != v[0] {
			t.Errorf("%s = %v, want %v", k, got, v)
		}
	}
	r = a.handle(30*s, 21)
	if r.Status != 429 || r.Header.Get("RateLimit-Remaining") != "20" || r.Header.Get("RateLimit-Reset") != "30" || r.RetryAfter != 30*s {
		t.Errorf("429: %d %v %v", r.Status, r.RetryAfter, r.Header)
	}
}
