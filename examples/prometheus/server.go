package main

import (
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// server is the dependency. It has two quotas: a hidden one of 25 requests
// a second, refused with 429 and Retry-After and never published, and a
// published one of 200 requests per 10-second window, announced in
// X-RateLimit-* headers, which drops to 80 at three fifths of the
// workload's flat-out phase. A six-second outage near three tenths of it
// answers 500, then 503:
// three seconds of 500s open the clients' breakers even when the machine
// is slow enough that they send only a few requests a second.
type server struct {
	start  time.Time
	outage [2]time.Duration // from, to
	drop   time.Duration    // when the published quota drops

	mu              sync.Mutex
	second, window  int64 // indices of the current hidden and published windows
	inSecond, inWin int

	// What it answered, for the example's report.
	received, ok, throttled, unavailable, failed atomic.Int64
}

const publishedWindow = 10 * time.Second

// newServer is the dependency of a workload whose flat-out phase lasts d.
// It starts the outage at the published window's reset nearest three
// tenths of d, so that the clients' guards, holding until a reset, let
// requests meet it.
func newServer(d time.Duration) *server {
	out := (d*3/10 + publishedWindow/2).Truncate(publishedWindow)
	return &server{start: time.Now(), outage: [2]time.Duration{out, out + 6*time.Second}, drop: d * 6 / 10}
}

func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.received.Add(1)
	since := time.Since(s.start)
	if since >= s.outage[0] && since < s.outage[1] {
		// First 500s, failures the breaker counts, then 503s, a throttle
		// the runner retries without charging the breaker.
		if since < (s.outage[0]+s.outage[1])/2 {
			s.failed.Add(1)
			w.WriteHeader(http.StatusInternalServerError)
		} else {
			s.unavailable.Add(1)
			w.WriteHeader(http.StatusServiceUnavailable)
		}
		return
	}
	limit := 200
	if since >= s.drop {
		limit = 80
	}
	hidden, remaining, reset := s.take(since, limit)
	h := w.Header()
	h.Set("X-RateLimit-Limit", strconv.Itoa(limit))
	h.Set("X-RateLimit-Remaining", strconv.Itoa(max(remaining, 0)))
	h.Set("X-RateLimit-Reset", strconv.Itoa(reset))
	if hidden || remaining < 0 {
		s.throttled.Add(1)
		retry := reset
		if hidden {
			retry = 1
		}
		h.Set("Retry-After", strconv.Itoa(retry))
		w.WriteHeader(http.StatusTooManyRequests)
		return
	}
	s.ok.Add(1)
	time.Sleep(5 * time.Millisecond) // some work, for the latency panels
}

// take counts one request against both quotas at since. It reports
// whether the hidden quota refused it, what the published window has left
// (below 0: refused) and the seconds until that window resets. A request
// refused by either quota still counts against both, as most servers
// count it.
func (s *server) take(since time.Duration, limit int) (hidden bool, remaining, reset int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sec := int64(since / time.Second); sec != s.second {
		s.second, s.inSecond = sec, 0
	}
	if win := int64(since / publishedWindow); win != s.window {
		s.window, s.inWin = win, 0
	}
	s.inSecond++
	s.inWin++
	resetAt := time.Duration(s.window+1) * publishedWindow
	return s.inSecond > 25, limit - s.inWin, int((resetAt - since + time.Second - 1) / time.Second)
}
