package acceptance

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"
)

// ask sends one request of cost units to h and returns the response's
// status and headers.
func ask(h http.Handler, cost string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	if cost != "" {
		req.Header.Set(CostHeader, cost)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

func newLogServer(l Limit, h Headers, sched logSchedule) *logServer {
	return &logServer{sched: sched, headers: h, log: newSlidingLog(l.Units, l.Window)}
}

type wantResponse struct {
	status                              int
	limit, remaining, reset, retryAfter string // "" means absent
	policy                              string
}

func check(t *testing.T, when string, rec *httptest.ResponseRecorder, want wantResponse) {
	t.Helper()
	got := wantResponse{status: rec.Code,
		limit: rec.Header().Get("RateLimit-Limit"), remaining: rec.Header().Get("RateLimit-Remaining"),
		reset: rec.Header().Get("RateLimit-Reset"), retryAfter: rec.Header().Get("Retry-After"),
		policy: rec.Header().Get("RateLimit-Policy")}
	if got != want {
		t.Errorf("%s: got %+v, want %+v", when, got, want)
	}
}

func TestLogServerDraft6(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Limit{Units: 10, Window: 10 * time.Second}
		s := newLogServer(l, PublishDraft6, logSchedule{units: 10, window: l.Window})
		check(t, "3 units at 0", ask(s, "3"), wantResponse{200, "10", "7", "10", "", "10;w=10"})
		time.Sleep(4 * time.Second)
		check(t, "5 units at 4 s", ask(s, "5"), wantResponse{200, "10", "2", "6", "", "10;w=10"})
		// 3 more would make 11: the first 3 must leave, at 10 s.
		check(t, "3 units at 4 s", ask(s, "3"), wantResponse{429, "10", "2", "6", "6", "10;w=10"})
		time.Sleep(6500 * time.Millisecond)
		// At 10.5 s the first 3 have left; the oldest left is the 5 of 4 s,
		// leaving at 14 s: 3.5 s, published as 4.
		check(t, "3 units at 10.5 s", ask(s, "3"), wantResponse{200, "10", "2", "4", "", "10;w=10"})
		check(t, "a cost above the capacity", ask(s, "11"), wantResponse{429, "10", "2", "4", "10", "10;w=10"})
		if rec := ask(s, "two"); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `X-Cost is "two"`) {
			t.Errorf("a bad cost: %d %q, want 400 saying what was sent", rec.Code, rec.Body.String())
		}
		check(t, "no cost is 1 unit", ask(s, ""), wantResponse{200, "10", "1", "4", "", "10;w=10"})
	})
}

func TestLogServerRetryAfterAndNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Limit{Units: 2, Window: time.Second}
		ra := newLogServer(l, PublishRetryAfter, logSchedule{units: 2, window: time.Second})
		check(t, "retry-after: admitted", ask(ra, "2"), wantResponse{status: 200})
		time.Sleep(300 * time.Millisecond)
		// Room comes back in 0.7 s: published as 1.
		check(t, "retry-after: refused", ask(ra, "1"), wantResponse{status: 429, retryAfter: "1"})

		none := newLogServer(l, PublishNone, logSchedule{units: 2, window: time.Second})
		check(t, "none: admitted", ask(none, "2"), wantResponse{status: 200})
		check(t, "none: refused", ask(none, "1"), wantResponse{status: 429})
	})
}

func TestLogServerHalves(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Limit{Units: 10, Window: time.Second}
		s := newLogServer(l, PublishDraft6, logSchedule{units: 10, window: time.Second, halveAt: 5 * time.Second})
		check(t, "full at 0", ask(s, "10"), wantResponse{200, "10", "0", "1", "", "10;w=1"})
		time.Sleep(4500 * time.Millisecond)
		check(t, "before the halving", ask(s, "10"), wantResponse{200, "10", "0", "1", "", "10;w=1"})
		time.Sleep(500 * time.Millisecond)
		// At 5 s the capacity is 5, and the 10 of 4.5 s are in the window
		// until 5.5 s.
		check(t, "at the halving", ask(s, "1"), wantResponse{429, "5", "0", "1", "1", "5;w=1"})
		time.Sleep(500 * time.Millisecond)
		check(t, "after the halving", ask(s, "5"), wantResponse{200, "5", "0", "1", "", "5;w=1"})
	})
}

func TestLogServerOutage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Limit{Units: 10, Window: time.Second}
		s := newLogServer(l, PublishDraft6, logSchedule{units: 10, window: time.Second, downFrom: 2 * time.Second, downTo: 4 * time.Second})
		check(t, "before", ask(s, "1"), wantResponse{200, "10", "9", "1", "", "10;w=1"})
		time.Sleep(2 * time.Second)
		check(t, "at the outage's start", ask(s, "1"), wantResponse{status: 503})
		time.Sleep(2*time.Second - 1)
		check(t, "at its last instant", ask(s, "1"), wantResponse{status: 503})
		time.Sleep(time.Nanosecond)
		// The outage counted nothing: a whole window's units are there.
		check(t, "after", ask(s, "10"), wantResponse{200, "10", "0", "1", "", "10;w=1"})
	})
}

func TestPauseEndsWithContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		start := time.Now()
		pause(context.Background(), 100*time.Millisecond)
		if got := time.Since(start); got != 100*time.Millisecond {
			t.Errorf("paused %s, want 100ms", got)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		start = time.Now()
		pause(ctx, time.Hour)
		if got := time.Since(start); got != 30*time.Millisecond {
			t.Errorf("paused %s with a context ending after 30ms", got)
		}
	})
}

func TestConnectionResetter(t *testing.T) {
	t.Run("resets a doomed connection's first request", func(t *testing.T) {
		srv, err := ResettingLog(Limit{Units: 100, Window: time.Second}, PublishDraft6, 1, 1).Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/")
		if err == nil {
			resp.Body.Close()
			t.Fatalf("got %s, want a connection reset", resp.Status)
		}
		if !errors.Is(err, syscall.ECONNRESET) {
			t.Fatalf("got %v, want a connection reset", err)
		}
	})
	t.Run("closes a connection after its requests", func(t *testing.T) {
		srv, err := ResettingLog(Limit{Units: 100, Window: time.Second}, PublishDraft6, 0, 1).Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer srv.Close()
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		for i := 1; i <= connectionRequests; i++ {
			resp, err := (&http.Client{Transport: tr}).Get(srv.URL + "/")
			if err != nil {
				t.Fatal(err)
			}
			// Read to the end, or the transport will not reuse the connection.
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.Close != (i == connectionRequests) {
				t.Fatalf("response %d: Connection: close is %v, want it on response %d only", i, resp.Close, connectionRequests)
			}
		}
	})
	if _, err := newConnectionResetter(okHandler, 1.5, 1, 1); err == nil || !strings.Contains(err.Error(), "1.5") {
		t.Errorf("a fraction of 1.5: error %v, want one naming it", err)
	}
}

func TestServersRefuseBadLimits(t *testing.T) {
	bad := Limit{Units: 0, Window: -time.Second}
	for _, spec := range []ServerSpec{OwnSlidingLog(bad, PublishDraft6), HTTPRate(bad, PublishXRateLimit), Ulule(bad), Tollbooth(bad)} {
		if srv, err := spec.Start(context.Background()); err == nil {
			srv.Close()
			t.Errorf("%s started with limit %s", spec.Name, bad)
		} else if !strings.Contains(err.Error(), "units 0, want 1 or more") || !strings.Contains(err.Error(), "window -1s") {
			t.Errorf("%s: error %q does not say what is wrong", spec.Name, err)
		}
	}
	ok := Limit{Units: 5, Window: time.Second}
	for _, spec := range []ServerSpec{OwnSlidingLog(ok, PublishDraft8), HTTPRate(ok, PublishDraft6)} {
		if srv, err := spec.Start(context.Background()); err == nil {
			srv.Close()
			t.Errorf("%s started publishing %s", spec.Name, spec.Headers)
		} else if !strings.Contains(err.Error(), strconv.Quote(string(spec.Headers))) {
			t.Errorf("%s: error %q does not name the headers", spec.Name, err)
		}
	}
}

// TestLogServerDraft3: draft-03's three fields, the reset the seconds until
// the oldest units leave, and no policy: nothing names the window.
func TestLogServerDraft3(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := Limit{Units: 10, Window: 10 * time.Second}
		s := newLogServer(l, PublishDraft3, logSchedule{units: 10, window: l.Window})
		check(t, "3 units at 0", ask(s, "3"), wantResponse{200, "10", "7", "10", "", ""})
		time.Sleep(4 * time.Second)
		check(t, "5 units at 4 s", ask(s, "5"), wantResponse{200, "10", "2", "6", "", ""})
		check(t, "3 units at 4 s", ask(s, "3"), wantResponse{429, "10", "2", "6", "6", ""})
	})
}
