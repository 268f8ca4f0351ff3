package acceptance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/headroom-go/headroom/limit/quota"
)

// The limit every external server is tested with: 5 a second, and for
// nginx a burst of 2.
var externalLimit = Limit{Units: 5, Window: time.Second, Burst: 2}

// shot is one request of a burst and how it ended.
type shot struct {
	status int
	header http.Header
	took   time.Duration // from the burst's start to the response's end
}

// fire sends n GETs to url: one after another, or all at once when
// together. Shots come back in the order sent.
func fire(t *testing.T, client *http.Client, url string, n int, together bool) []shot {
	t.Helper()
	shots := make([]shot, n)
	errs := make([]error, n)
	start := time.Now()
	one := func(i int) {
		resp, err := client.Get(url)
		if err != nil {
			errs[i] = err
			return
		}
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		shots[i] = shot{status: resp.StatusCode, header: resp.Header, took: time.Since(start)}
		errs[i] = err
	}
	if together {
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { one(i) })
		}
		wg.Wait()
	} else {
		for i := range n {
			one(i)
		}
	}
	if err := errors.Join(errs...); err != nil {
		t.Fatalf("burst of %d to %s: %v", n, url, err)
	}
	return shots
}

// count is how many shots ended with status.
func count(shots []shot, status int) int {
	n := 0
	for _, s := range shots {
		if s.status == status {
			n++
		}
	}
	return n
}

// first is the first shot that ended with status; it fails the test when
// there is none.
func first(t *testing.T, shots []shot, status int) shot {
	t.Helper()
	for _, s := range shots {
		if s.status == status {
			return s
		}
	}
	t.Fatalf("no response %d among %v", status, statuses(shots))
	return shot{}
}

func statuses(shots []shot) []int {
	out := make([]int, len(shots))
	for i, s := range shots {
		out[i] = s.status
	}
	return out
}

// wantAccepted checks that want of shots were accepted and the rest
// refused with 429, give or take slack where timing blurs the count.
func wantAccepted(t *testing.T, what string, shots []shot, want, slack int) {
	t.Helper()
	ok, refused := count(shots, http.StatusOK), count(shots, http.StatusTooManyRequests)
	if ok+refused != len(shots) {
		t.Errorf("%s: statuses %v, want only 200 and 429", what, statuses(shots))
	}
	t.Logf("%s: %d accepted, %d refused: %v", what, ok, refused, statuses(shots))
	if ok < want-slack || ok > want+slack {
		t.Errorf("%s: %d of %d accepted (%v), want %d±%d as modelled", what, ok, len(shots), statuses(shots), want, slack)
	}
}

// testClient is a keep-alive client for one test; the test closes its
// idle connections before checking for leaked goroutines.
func testClient() (*http.Client, func()) {
	tr := &http.Transport{MaxIdleConnsPerHost: 16}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, tr.CloseIdleConnections
}

// startExternal starts an external server for a test. A missing server
// skips the test with the SkipError's reason, except under CI=true, where
// it fails it.
func startExternal(t *testing.T, start func(context.Context) (*childProcess, error)) *childProcess {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := start(ctx)
	if IsSkip(err) {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true, where a server the suite needs must be installed: %v", err)
		}
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// stopExternal closes p through its Server and checks that its process
// group is gone, its port closed and its directory removed.
func stopExternal(t *testing.T, p *childProcess) {
	t.Helper()
	if err := p.server().Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if err := syscall.Kill(-p.pgid(), 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("process group %d of %s still has processes after Close (kill -0: %v)", p.pgid(), p.name, err)
	}
	if conn, err := net.DialTimeout("tcp", strings.TrimPrefix(p.url, "http://"), time.Second); err == nil {
		conn.Close()
		t.Errorf("%s still accepts connections after Close", p.url)
	}
	if _, err := os.Stat(p.dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("%s's directory %s is still there after Close (%v)", p.name, p.dir, err)
	}
}

// sleepUntil sleeps until t. These tests check nginx, HAProxy and
// express-rate-limit, which run in processes of their own on the real
// clock: moving their windows takes real time, which testing/synctest's
// fake clock cannot give them. Nothing here waits for something to settle.
func sleepUntil(t time.Time) { time.Sleep(time.Until(t)) }

// unpublished checks that a server said nothing about its limit, not even
// Retry-After on a refusal.
func unpublished(t *testing.T, shots []shot) {
	t.Helper()
	for _, s := range shots {
		for key := range s.header {
			k := strings.ToLower(key)
			if strings.HasPrefix(k, "ratelimit") || strings.HasPrefix(k, "x-ratelimit") || k == "retry-after" {
				t.Errorf("response %d carries %s: %q, but the server claims to publish nothing", s.status, key, s.header.Get(key))
			}
		}
		if q, ok := quota.Parse(s.header, time.Now()); ok {
			t.Errorf("response %d publishes a quota the client reads: %+v", s.status, q)
		}
	}
}

func TestNginxLimitsAsModelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := externalLimit

	t.Run("nodelay", func(t *testing.T) {
		l := l
		l.NoDelay = true
		client, closeIdle := testClient()
		p := startExternal(t, func(ctx context.Context) (*childProcess, error) { return startNginx(ctx, l) })
		defer stopExternal(t, p)
		defer closeIdle() // before stopExternal, as the harness closes its client first

		// From fresh: the first request and burst more at once.
		shots := fire(t, client, p.url+"/", 10, false)
		wantAccepted(t, "nodelay burst of 10", shots, int(nginxAllowance(l, 0)), 1)
		if got := statuses(shots)[:3]; !slices.Equal(got, []int{200, 200, 200}) {
			t.Errorf("nodelay: the first 3 answered %v, want 200 at once", got)
		}
		unpublished(t, shots)
		// Refusals leave the excess as it was: 1.25 requests' worth of leak
		// later, one more fits, and only one.
		sleepUntil(time.Now().Add(250 * time.Millisecond))
		wantAccepted(t, "nodelay, 250 ms after the burst", fire(t, client, p.url+"/", 2, false), 1, 0)
	})

	t.Run("delay=1", func(t *testing.T) {
		l := l
		l.Delay = 1
		client, closeIdle := testClient()
		p := startExternal(t, func(ctx context.Context) (*childProcess, error) { return startNginx(ctx, l) })
		defer stopExternal(t, p)
		defer closeIdle() // before stopExternal, as the harness closes its client first

		// Excess 0 and 1 at once, excess 2 held (2−1)/5 s = 200 ms, the rest refused.
		shots := fire(t, client, p.url+"/", 6, true)
		wantAccepted(t, "delay=1 burst of 6", shots, 3, 0)
		checkDelays(t, shots, []time.Duration{0, 0, 200 * time.Millisecond})
		unpublished(t, shots)
	})

	t.Run("delayed", func(t *testing.T) {
		client, closeIdle := testClient()
		p := startExternal(t, func(ctx context.Context) (*childProcess, error) { return startNginx(ctx, l) })
		defer stopExternal(t, p)
		defer closeIdle() // before stopExternal, as the harness closes its client first

		// Excess 0 at once, excess 1 and 2 held 200 and 400 ms.
		shots := fire(t, client, p.url+"/", 6, true)
		wantAccepted(t, "delayed burst of 6", shots, 3, 0)
		checkDelays(t, shots, []time.Duration{0, 200 * time.Millisecond, 400 * time.Millisecond})
		unpublished(t, shots)
	})
}

// checkDelays checks that the accepted shots, fastest first, took the
// delays nginx holds them for, within 150 ms.
func checkDelays(t *testing.T, shots []shot, want []time.Duration) {
	t.Helper()
	var took []time.Duration
	for _, s := range shots {
		if s.status == http.StatusOK {
			took = append(took, s.took)
		}
	}
	slices.Sort(took)
	if len(took) != len(want) {
		return // wantAccepted said so
	}
	for i := range want {
		if took[i] < want[i]-20*time.Millisecond || took[i] > want[i]+150*time.Millisecond {
			t.Errorf("accepted requests took %v, want about %v", took, want)
			return
		}
	}
}

func TestHAProxyLimitsAsModelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	l := HAProxy(externalLimit).Limit
	client, closeIdle := testClient()
	p := startExternal(t, func(ctx context.Context) (*childProcess, error) { return startHAProxy(ctx, l) })
	defer stopExternal(t, p)
	defer closeIdle() // before stopExternal, as the harness closes its client first

	t0 := time.Now()
	shots := fire(t, client, p.url+"/", 10, false)
	wantAccepted(t, "burst of 10", shots, int(haproxyAllowance(l, 0)), 0)
	unpublished(t, shots)

	// Early in the next period the last one weighs 9/10: its 10 requests
	// read as 9, so one more makes 10 > 5. Had the 5 refusals not counted,
	// 5·9/10 = 4 and one more would fit.
	sleepUntil(t0.Add(1100 * time.Millisecond))
	wantAccepted(t, "one request 1.1 s in, after 5 refusals", fire(t, client, p.url+"/", 1, false), 0, 0)

	// In the period after, the previous one held that single request, which
	// weighs ⌊1·0.7⌋ = 0: the whole limit again.
	sleepUntil(t0.Add(2300 * time.Millisecond))
	wantAccepted(t, "burst of 6, 2.3 s in", fire(t, client, p.url+"/", 6, false), 5, 0)
}

func TestExpressLimitsAsModelled(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, h := range []Headers{PublishNone, PublishDraft6, PublishDraft7, PublishDraft8, PublishXRateLimit} {
		t.Run(string(h), func(t *testing.T) {
			l := Express(externalLimit, h).Limit
			client, closeIdle := testClient()
			p := startExternal(t, func(ctx context.Context) (*childProcess, error) { return startExpress(ctx, l, h) })
			defer stopExternal(t, p)
			defer closeIdle() // before stopExternal, as the harness closes its client first

			t0 := time.Now()
			shots := fire(t, client, p.url+"/", 10, false)
			wantAccepted(t, "burst of 10", shots, int(expressAllowance(l, 0)), 0)
			if got := statuses(shots)[:5]; !slices.Equal(got, []int{200, 200, 200, 200, 200}) {
				t.Errorf("the first 5 answered %v, want 200", got)
			}
			refused := first(t, shots, http.StatusTooManyRequests)
			if h == PublishNone {
				unpublished(t, shots)
			} else {
				for i, s := range shots {
					checkPublished(t, h, s, max(5-i-1, 0))
				}
				if got := refused.header.Get("Retry-After"); got != "1" {
					t.Errorf("429's Retry-After is %q, want 1 (the window's end, in whole seconds up)", got)
				}
			}

			// Still the first window: refused. The window is the client's,
			// from its first request.
			sleepUntil(t0.Add(500 * time.Millisecond))
			wantAccepted(t, "0.5 s in", fire(t, client, p.url+"/", 1, false), 0, 0)
			// The first request after it ends opens a new one at 0: the
			// refusals carried nothing over.
			sleepUntil(t0.Add(1100 * time.Millisecond))
			shots = fire(t, client, p.url+"/", 6, false)
			wantAccepted(t, "burst of 6, 1.1 s in", shots, 5, 0)
			if h != PublishNone {
				checkPublished(t, h, shots[0], 4)
			}
		})
	}
}

// checkPublished checks that s carries h's headers with limit 5, a window
// of 1 s and remaining left, both as written and as the client reads them.
func checkPublished(t *testing.T, h Headers, s shot, remaining int) {
	t.Helper()
	want := map[Headers]map[string]string{
		PublishDraft6: {
			"RateLimit-Policy":    `^5;w=1$`,
			"RateLimit-Limit":     `^5$`,
			"RateLimit-Remaining": fmt.Sprintf(`^%d$`, remaining),
			"RateLimit-Reset":     `^[01]$`,
		},
		PublishDraft7: {
			"RateLimit":        fmt.Sprintf(`^limit=5, remaining=%d, reset=[01]$`, remaining),
			"RateLimit-Policy": `^5;w=1$`,
		},
		PublishDraft8: {
			"RateLimit":        fmt.Sprintf(`^"5-in-1sec"; r=%d; t=[01]$`, remaining),
			"RateLimit-Policy": `^"5-in-1sec"; q=5; w=1; pk=:[A-Za-z0-9+/]+=*:$`,
		},
		PublishXRateLimit: {
			"X-RateLimit-Limit":     `^5$`,
			"X-RateLimit-Remaining": fmt.Sprintf(`^%d$`, remaining),
			"X-RateLimit-Reset":     `^[0-9]{10}$`,
		},
	}[h]
	for key, pattern := range want {
		if got := s.header.Values(key); len(got) != 1 || !regexp.MustCompile(pattern).MatchString(got[0]) {
			t.Errorf("%s response %d: %s is %q, want one matching %s", h, s.status, key, got, pattern)
		}
	}
	wanted := map[string]bool{}
	for key := range want {
		wanted[http.CanonicalHeaderKey(key)] = true
	}
	for key := range s.header {
		k := strings.ToLower(key)
		if !wanted[key] && (strings.HasPrefix(k, "ratelimit") || strings.HasPrefix(k, "x-ratelimit")) {
			t.Errorf("%s response %d carries %s: %q as well", h, s.status, key, s.header.Get(key))
		}
	}
	if h == PublishXRateLimit {
		// Epoch seconds, rounded up: within the window from now.
		var reset int64
		fmt.Sscan(s.header.Get("X-RateLimit-Reset"), &reset)
		if now := time.Now().Unix(); reset < now || reset > now+2 {
			t.Errorf("X-RateLimit-Reset is %d, want within 2 s of now (%d)", reset, now)
		}
	}
	dialect := map[Headers]string{PublishDraft6: "ietf-06", PublishDraft7: "ietf-07",
		PublishDraft8: "ietf", PublishXRateLimit: "x-ratelimit"}[h]
	q, ok := quota.Parse(s.header, time.Now())
	if !ok || q.Dialect != dialect || q.Limit != 5 || q.Remaining != int64(remaining) {
		t.Errorf("%s response %d reads as %+v (ok %v), want dialect %s, limit 5, remaining %d", h, s.status, q, ok, dialect, remaining)
	}
}

func TestExpressRefusesRetryAfterAlone(t *testing.T) {
	_, err := Express(externalLimit, PublishRetryAfter).Start(context.Background())
	if err == nil || IsSkip(err) || !strings.Contains(err.Error(), "Retry-After alone") {
		t.Errorf("Start with PublishRetryAfter: %v, want an error that says express-rate-limit cannot", err)
	}
}

func TestExternalServersSkipWhenMissing(t *testing.T) {
	_, err := findProgram("headroom-no-such-server", "apt-get install -y headroom-no-such-server")
	var skip *SkipError
	if !errors.As(err, &skip) || !strings.Contains(skip.Why, installScript) || !strings.Contains(skip.Why, "apt-get install -y headroom-no-such-server") {
		t.Errorf("findProgram of a missing program: %v, want a *SkipError naming %s and the package", err, installScript)
	}
	err = expressModules(t.TempDir())
	if !errors.As(err, &skip) || !strings.Contains(skip.Why, installScript) || !strings.Contains(skip.Why, "npm ci") {
		t.Errorf("expressModules without node_modules: %v, want a *SkipError naming %s and npm ci", err, installScript)
	}
}

func TestExternalAllowances(t *testing.T) {
	s := time.Second
	for _, tc := range []struct {
		name string
		spec ServerSpec
		d    time.Duration
		want float64
	}{
		{"nginx nodelay, fresh", Nginx(Limit{Units: 5, Window: s, Burst: 2, NoDelay: true}), 0, 3},
		{"nginx nodelay, 10 s", Nginx(Limit{Units: 5, Window: s, Burst: 2, NoDelay: true}), 10 * s, 53},
		{"nginx delay=1, 10 s", Nginx(Limit{Units: 5, Window: s, Burst: 2, Delay: 1}), 10 * s, 52},
		{"nginx delay over burst is nodelay", Nginx(Limit{Units: 5, Window: s, Burst: 2, Delay: 9}), 10 * s, 53},
		{"nginx delayed, 10 s", Nginx(Limit{Units: 5, Window: s, Burst: 2}), 10 * s, 51},
		// 7 r/m is ⌊7000/60⌋ = 116 thousandths a second to nginx.
		{"nginx r/m rounds its rate down", Nginx(Limit{Units: 7, Window: time.Minute}), 100 * s, 1 + 11.6},
		{"nginx rate it cannot express", Nginx(Limit{Units: 7, Window: 11 * s}), 10 * s, 0},
		{"nginx nodelay and delay", Nginx(Limit{Units: 5, Window: s, Burst: 2, NoDelay: true, Delay: 1}), 10 * s, 0},
		{"haproxy, fresh", HAProxy(Limit{Units: 5, Window: s}), 0, 5},
		{"haproxy, within the first window", HAProxy(Limit{Units: 5, Window: s}), 999 * time.Millisecond, 5},
		{"haproxy, at the second window", HAProxy(Limit{Units: 5, Window: s}), s, 5},
		{"haproxy, 1 ms into the second window", HAProxy(Limit{Units: 5, Window: s}), s + time.Millisecond, 6},
		{"haproxy, 2.5 windows", HAProxy(Limit{Units: 5, Window: s}), 2500 * time.Millisecond, 13},
		{"haproxy, 10 windows", HAProxy(Limit{Units: 5, Window: s}), 10 * s, 50},
		{"express, fresh", Express(Limit{Units: 5, Window: s}, PublishDraft7), 0, 5},
		{"express, within the first window", Express(Limit{Units: 5, Window: s}, PublishDraft7), 999 * time.Millisecond, 5},
		{"express, when the second window opens", Express(Limit{Units: 5, Window: s}, PublishDraft7), s, 5},
		{"express, 1 ms into the second window", Express(Limit{Units: 5, Window: s}, PublishDraft7), s + time.Millisecond, 10},
		{"express, 10 s", Express(Limit{Units: 5, Window: s}, PublishNone), 10 * s, 50},
		{"express, window not in milliseconds", Express(Limit{Units: 5, Window: time.Microsecond}, PublishNone), 10 * s, 0},
	} {
		if got := tc.spec.Allowance(tc.d); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: Allowance(%s) = %v, want %v", tc.name, tc.d, got, tc.want)
		}
	}
}

func TestNginxRates(t *testing.T) {
	for _, tc := range []struct {
		l     Limit
		rate  string
		milli int64
		err   bool
	}{
		{Limit{Units: 5, Window: time.Second}, "5r/s", 5000, false},
		{Limit{Units: 300, Window: time.Minute}, "5r/s", 5000, false},
		{Limit{Units: 5, Window: 2 * time.Second}, "150r/m", 2500, false},
		{Limit{Units: 1, Window: time.Minute}, "1r/m", 16, false},
		{Limit{Units: 1, Window: time.Hour}, "", 0, true},
		{Limit{Units: 0, Window: time.Second}, "", 0, true},
		{Limit{Units: 5, Window: 0}, "", 0, true},
	} {
		rate, milli, err := nginxRate(tc.l)
		if rate != tc.rate || milli != tc.milli || (err != nil) != tc.err {
			t.Errorf("nginxRate(%s) = %q, %d, %v; want %q, %d, error %v", tc.l, rate, milli, err, tc.rate, tc.milli, tc.err)
		}
	}
}

func TestExternalServersSayWhenTheirPortIsTaken(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := taken.Addr().(*net.TCPAddr).Port
	for _, tc := range []struct {
		program string
		start   func(ctx context.Context, path string) (*childProcess, error)
	}{
		{"nginx", func(ctx context.Context, path string) (*childProcess, error) {
			return startNginxOn(ctx, path, port, Limit{Units: 5, Window: time.Second})
		}},
		{"haproxy", func(ctx context.Context, path string) (*childProcess, error) {
			return startHAProxyOn(ctx, path, port, Limit{Units: 5, Window: time.Second})
		}},
	} {
		t.Run(tc.program, func(t *testing.T) {
			path, err := findProgram(tc.program, "apt-get install -y "+tc.program)
			if IsSkip(err) {
				if os.Getenv("CI") == "true" {
					t.Fatalf("CI=true, where a server the suite needs must be installed: %v", err)
				}
				t.Skip(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			p, err := tc.start(ctx, path)
			if err == nil {
				p.stop()
				t.Fatalf("%s started on a port another listener holds", tc.program)
			}
			t.Logf("%s on a taken port: %v", tc.program, err)
			if !errors.Is(err, errPortTaken) {
				t.Errorf("%s on a taken port: %v, want an error wrapping errPortTaken", tc.program, err)
			}
		})
	}
}

func TestStartOnFreePortTriesAnotherPort(t *testing.T) {
	var ports []int
	p, err := startOnFreePort(func(port int) (*childProcess, error) {
		ports = append(ports, port)
		if len(ports) < 3 {
			return nil, fmt.Errorf("bind: %w", errPortTaken)
		}
		return &childProcess{name: "fake"}, nil
	})
	if err != nil || p == nil || len(ports) != 3 {
		t.Errorf("startOnFreePort after two taken ports: %v, %v after %d tries, want the third", p, err, len(ports))
	}
	_, err = startOnFreePort(func(int) (*childProcess, error) { return nil, fmt.Errorf("bind: %w", errPortTaken) })
	if err == nil || !strings.Contains(err.Error(), "all taken") {
		t.Errorf("startOnFreePort with every port taken: %v, want an error saying so", err)
	}
	_, err = startOnFreePort(func(int) (*childProcess, error) { return nil, errors.New("bad configuration") })
	if err == nil || errors.Is(err, errPortTaken) || err.Error() != "bad configuration" {
		t.Errorf("startOnFreePort with another error: %v, want it as it was, at once", err)
	}
}
