package fleet

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The Cluster and Sentinel tests run against the topologies that
// .ci/redis-topologies.sh starts: HEADROOM_REDIS_TOPOLOGY is its folder,
// HEADROOM_REDIS_CLUSTER the Cluster's six nodes, HEADROOM_REDIS_SENTINEL
// "master@sentinel,sentinel,sentinel". They kill and restart its nodes, so
// they run in a step of their own (.ci/run), alone and without the race
// detector, which would slow the failovers they time.
const topologyEnv = "HEADROOM_REDIS_TOPOLOGY"

// noTopology says why the topology tests skip; empty when they run.
func noTopology() string {
	if os.Getenv(topologyEnv) == "" {
		return topologyEnv + " is not set (.ci/redis-topologies.sh start DIR && . DIR/env starts the topologies and sets it)"
	}
	return ""
}

// topology is the running topology: its folder, where each node keeps its
// redis.conf and pidfile under its port, and the nodes' addresses.
type topology struct {
	dir        string
	cluster    []string
	masterName string
	sentinels  []string
}

// needTopology returns the topology, or skips the test (TestMain has said
// why, once).
func needTopology(t *testing.T) *topology {
	t.Helper()
	if noTopology() != "" {
		t.Skip("no topology")
	}
	tp := &topology{dir: os.Getenv(topologyEnv), cluster: strings.Split(os.Getenv("HEADROOM_REDIS_CLUSTER"), ",")}
	name, sentinels, _ := strings.Cut(os.Getenv("HEADROOM_REDIS_SENTINEL"), "@")
	tp.masterName, tp.sentinels = name, strings.Split(sentinels, ",")
	return tp
}

func portOf(addr string) string { return addr[strings.LastIndexByte(addr, ':')+1:] }

// pid is the process serving addr, from the pidfile its redis.conf names.
func (tp *topology) pid(t *testing.T, addr string) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tp.dir, portOf(addr), "pid"))
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// kill ends the node at addr with SIGKILL, as a crash would: no last write
// reaches its replica, and waits until it is gone.
func (tp *topology) kill(t *testing.T, addr string) {
	t.Helper()
	pid := tp.pid(t, addr)
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill %s (pid %d): %v", addr, pid, err)
	}
	waitUntil(t, 10*time.Second, "the killed node's process to end", func() bool {
		_, err := os.Stat(fmt.Sprintf("/proc/%d", pid))
		return err != nil
	})
}

// revive starts the node at addr again from its redis.conf: empty (it keeps
// nothing on disk), it rejoins as a replica of whoever took its place.
func (tp *topology) revive(t *testing.T, addr string) {
	t.Helper()
	out, err := exec.Command("redis-server", filepath.Join(tp.dir, portOf(addr), "redis.conf")).CombinedOutput()
	if err != nil {
		t.Fatalf("restarting %s: %v: %s", addr, err, out)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	waitUntil(t, 10*time.Second, "the restarted node to answer", func() bool {
		return c.Ping(context.Background()).Err() == nil
	})
}

// waitUntil asks cond every 10 ms until it holds, for at most within. The
// topology's failovers run on the servers' clocks, which no test can fake.
func waitUntil(t testing.TB, within time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Since(start) > within {
			t.Fatalf("waiting for %s: not within %v", what, within)
		}
		<-tick.C
	}
	return time.Since(start)
}

// node is a plain client of one node, closed when the test ends.
func node(t *testing.T, addr string) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
		ReadTimeout: time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}
