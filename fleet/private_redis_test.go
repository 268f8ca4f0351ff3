package fleet

import (
	"context"
	"net"
	"os/exec"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// privateRedis is a redis-server of the test's own on a free loopback port,
// for what cannot be done to the shared server: flushing its scripts,
// stopping it and starting it again.
type privateRedis struct {
	t    testing.TB
	addr string
	cmd  *exec.Cmd
}

// startPrivateRedis starts one, or skips the test when redis-server is not
// installed (failing instead under CI, where it is).
func startPrivateRedis(t testing.TB) *privateRedis {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		if noRedis == "" && ciRun() {
			t.Fatal("redis-server is not installed")
		}
		t.Skip("redis-server is not installed")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	p := &privateRedis{t: t, addr: addr}
	p.start()
	t.Cleanup(p.stop)
	return p
}

// start starts the server and waits until it answers.
func (p *privateRedis) start() {
	p.t.Helper()
	_, port, _ := net.SplitHostPort(p.addr)
	p.cmd = exec.Command("redis-server", "--port", port, "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--logfile", "")
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1})
	defer c.Close()
	// The server needs a moment to listen; nothing but asking tells when.
	waitUntil(p.t, 10*time.Second, "redis-server on "+p.addr+" to answer", func() bool { return c.Ping(context.Background()).Err() == nil })
}

// stop kills the server, as a crash or a restart would end it.
func (p *privateRedis) stop() {
	if p.cmd == nil {
		return
	}
	p.cmd.Process.Kill()
	p.cmd.Wait()
	p.cmd = nil
}

// client returns a client of the server with the given timeouts.
func (p *privateRedis) client(t testing.TB) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: p.addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ContextTimeoutEnabled: true})
	t.Cleanup(func() { c.Close() })
	return c
}

func ciRun() bool { b, _ := strconv.ParseBool(getenv("CI")); return b }
