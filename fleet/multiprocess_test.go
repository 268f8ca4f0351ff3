package fleet

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"
)

// hiddenQuota is a loopback API with a quota it does not publish: at most
// limit requests accepted in any window (a sliding log); the others get 429.
type hiddenQuota struct {
	limit  int
	window time.Duration
	start  time.Time

	mu       sync.Mutex
	log      []time.Duration // accepted, oldest first, at most limit kept
	accepted []time.Duration // every acceptance, since start
	rejected []time.Duration
}

func (h *hiddenQuota) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	h.mu.Lock()
	now := time.Since(h.start)
	ok := len(h.log) < h.limit || h.log[0] <= now-h.window
	if ok {
		if len(h.log) == h.limit {
			h.log = h.log[1:]
		}
		h.log = append(h.log, now)
		h.accepted = append(h.accepted, now)
	} else {
		h.rejected = append(h.rejected, now)
	}
	h.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusTooManyRequests)
	}
}

// in counts the times in [from, to).
func in(ts []time.Duration, from, to time.Duration) int {
	n := 0
	for _, t := range ts {
		if t >= from && t < to {
			n++
		}
	}
	return n
}

// check holds a phase [from, to) of the run to the goals: at least 95% of
// the quota the phase offers used, and requests over the quota at most 1%
// of it.
func (h *hiddenQuota) check(t *testing.T, phase string, from, to time.Duration) {
	t.Helper()
	if miss := h.miss(t, phase, from, to); miss != "" {
		t.Error(miss)
	}
}

// miss is how the phase [from, to) misses the goals, or "" if it meets
// them.
func (h *hiddenQuota) miss(t *testing.T, phase string, from, to time.Duration) string {
	t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	offered := float64(h.limit) * (to - from).Seconds() / h.window.Seconds()
	used := float64(in(h.accepted, from, to)) / offered
	over := float64(in(h.rejected, from, to)) / offered
	t.Logf("%s [%v, %v): %.1f%% of the quota used, %.2f%% over it", phase, from, to, 100*used, 100*over)
	if used < 0.95 || over > 0.01 {
		return fmt.Sprintf("%s: used %.1f%% (want ≥ 95%%), over %.2f%% (want ≤ 1%%)", phase, 100*used, 100*over)
	}
	return ""
}

// processesEnv turns the four-process tests on. They hold a hidden quota
// to 1%, so they need the machine's cores to themselves: run alone, and
// not under the race detector, which slows the children ten times over.
// CI runs them in a step of their own.
const processesEnv = "HEADROOM_FLEET_PROCESSES"

func skipUnlessAlone(t *testing.T) {
	if os.Getenv(processesEnv) != "1" {
		t.Skip("the four-process tests run alone: " + processesEnv + "=1 go test -run FourProcesses ./fleet/")
	}
}

// fleetOf starts n processes of this test binary, each a child sharing the
// limit under prefix on addr, and returns them.
//
// addr is a server's address, or "cluster:addr,addr,…" or
// "sentinel:master@addr,addr,…" (see childClient); env adds to each
// child's environment.
func fleetOf(t *testing.T, n int, addr, prefix, server string, run time.Duration, failOpen func(i int) bool, env ...string) ([]*exec.Cmd, []*bytes.Buffer) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmds := make([]*exec.Cmd, n)
	outs := make([]*bytes.Buffer, n)
	for i := range cmds {
		cmd := exec.Command(self)
		cmd.Env = append(os.Environ(), childEnv+"=1",
			"HEADROOM_FLEET_REDIS="+addr, "HEADROOM_FLEET_PREFIX="+prefix, "HEADROOM_FLEET_SERVER="+server,
			"HEADROOM_FLEET_RATE="+strconv.Itoa(multiRate), "HEADROOM_FLEET_BURST="+strconv.Itoa(multiBurst),
			"HEADROOM_FLEET_RUN="+run.String(), "HEADROOM_FLEET_FAILOPEN="+map[bool]string{true: "1", false: "0"}[failOpen(i)])
		cmd.Env = append(cmd.Env, env...)
		outs[i] = &bytes.Buffer{}
		// A child's stderr holds the client's complaints while Redis is
		// down; it is shown only if the child fails.
		cmd.Stdout, cmd.Stderr = outs[i], &bytes.Buffer{}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds[i] = cmd
	}
	return cmds, outs
}

// The hidden quota is 400 in any second; the fleet's shared token bucket
// is set at 97.5% of it, 390 a second with a burst of 8, so that no second
// holds more than 398 grants, and the spread of the time from grant to
// arrival at the server (scheduling on a loaded machine) has 2 requests of
// room; the burst lets a process that was late to ask catch up.
const (
	multiQuota = 400
	multiRate  = 390
	multiBurst = 8
)

// result reads a child's last line.
func result(t *testing.T, out *bytes.Buffer) childResult {
	t.Helper()
	lines := bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n"))
	var r childResult
	if err := json.Unmarshal(lines[len(lines)-1], &r); err != nil {
		t.Fatalf("child's report %q: %v", out.String(), err)
	}
	return r
}

func quotaServer(t *testing.T) (*hiddenQuota, *httptest.Server) {
	h := &hiddenQuota{limit: multiQuota, window: time.Second, start: time.Now()}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return h, srv
}

// Four OS processes share the hidden quota through Redis: over it by at
// most 1%, at least 95% of it used. One is killed with SIGKILL mid-run: a
// counter of the fleet drops it within one heartbeat TTL, and the three
// left use the whole quota.
func TestFourProcessesShareOneQuota(t *testing.T) {
	skipUnlessAlone(t)
	c, prefix := testRedis(t)
	h, srv := quotaServer(t)
	const run = 6 * time.Second
	cmds, outs := fleetOf(t, 4, c.Options().Addr, prefix, srv.URL, run, func(int) bool { return false })
	counter, err := NewInstances(c, childTTL, Options{Name: "child", Prefix: prefix})
	if err != nil {
		t.Fatal(err)
	}
	defer counter.Close()
	eventually(t, 3*time.Second, "the parent counts itself and four children", func() bool { return counter.Instances() == 5 })
	// Every child has started, up to a heartbeat (200 ms) ago.
	up := time.Since(h.start)
	timer := time.NewTimer(2 * time.Second) // mid-run
	<-timer.C
	killAt := time.Since(h.start)
	// SIGKILL: no Close, no last word. The permits of its round trip in
	// flight, counted by Redis, are lost with it: up to its 8 callers'.
	cmds[3].Process.Kill()
	cmds[3].Wait()
	// Every member counts the others by their heartbeats: the parent is
	// one, and drops the killed child within one TTL, as the others do.
	eventually(t, childTTL+slack, "the killed process dropped", func() bool { return counter.Instances() == 4 })
	for _, cmd := range cmds[:3] {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("a child failed: %v", err)
		}
	}
	var total childResult
	for _, out := range outs[:3] {
		total.add(result(t, out))
	}
	t.Logf("the three that ran to the end: %+v", total)
	if total.Lost != 0 || total.SendErrors != 0 {
		t.Errorf("%d acquires ended with an untyped error, %d sends failed; want 0", total.Lost, total.SendErrors)
	}
	end := up + run - 500*time.Millisecond
	h.check(t, "four processes", up+200*time.Millisecond, killAt)
	h.check(t, "three processes after the kill", killAt+100*time.Millisecond, end)
}

// Four processes on a Redis that is stopped mid-run and started again:
// two fail open, two fail closed. Each follows its policy while Redis is
// down — the ones failing open keep admitting at their share, the ones
// failing closed return ErrUnavailable — no acquire ends without a lease
// or a typed error, and the sharing resumes once Redis is back.
func TestFourProcessesThroughARedisRestart(t *testing.T) {
	skipUnlessAlone(t)
	p := startPrivateRedis(t)
	h, srv := quotaServer(t)
	const run = 6 * time.Second
	cmds, outs := fleetOf(t, 4, p.addr, "restart", srv.URL, run, func(i int) bool { return i < 2 })
	startedAt := time.Since(h.start)
	timer := time.NewTimer(1500 * time.Millisecond) // a second and a half of sharing first
	<-timer.C
	stopAt := time.Since(h.start)
	p.stop()
	timer.Reset(time.Second) // a second of outage
	<-timer.C
	p.start()
	restartAt := time.Since(h.start)
	var results []childResult
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatalf("child %d failed: %v\n%s", i, err, cmd.Stderr)
		}
		results = append(results, result(t, outs[i]))
	}
	for i, r := range results {
		t.Logf("child %d (fail open %v): %+v", i, i < 2, r)
		if r.Lost != 0 || r.SendErrors != 0 {
			t.Errorf("child %d: %d acquires ended with an untyped error, %d sends failed", i, r.Lost, r.SendErrors)
		}
		if i < 2 && r.Unavailable != 0 {
			t.Errorf("child %d fails open but returned ErrUnavailable %d times", i, r.Unavailable)
		}
		if i >= 2 && r.Unavailable == 0 {
			t.Errorf("child %d fails closed but never returned ErrUnavailable", i)
		}
	}
	h.mu.Lock()
	during := in(h.accepted, stopAt+200*time.Millisecond, restartAt)
	h.mu.Unlock()
	if during == 0 {
		t.Error("nothing admitted while Redis was down: the processes failing open should keep their share")
	}
	h.check(t, "sharing before the outage", startedAt+300*time.Millisecond, stopAt)
	// A restarted Redis has forgotten everything (it keeps nothing on
	// disk), and the processes failing open admitted on their shares
	// while it was down, unseen by it: for one window of the hidden quota
	// after the restart, the server still counts those. The fleet may
	// overrun the quota then, by no more than they admitted.
	h.mu.Lock()
	unseen := in(h.accepted, restartAt-time.Second, restartAt)
	overrun := in(h.rejected, restartAt, restartAt+1200*time.Millisecond)
	h.mu.Unlock()
	t.Logf("after the restart: %d over the quota; %d admitted in the second before it", overrun, unseen)
	if overrun > unseen {
		t.Errorf("%d requests over the quota after the restart, more than the %d admitted unseen", overrun, unseen)
	}
	// Once the server's window has let go of the outage, and every
	// process's circuit has probed (at most 300 ms apart), the fleet shares
	// the quota again as before.
	h.check(t, "sharing after the restart", restartAt+1200*time.Millisecond, startedAt+run-200*time.Millisecond)
}
