package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// servers are the soak's own Redis servers, on free loopback ports: a
// master and a replica behind three Sentinels (master name "soak"). Each
// is a child process of the soak, so it stops exactly what it started.
type servers struct {
	dir       string
	bin       string
	nodes     [2]*server // the two data nodes; which is master changes
	sentinels [3]*server
}

type server struct {
	port int
	conf string
	cmd  *exec.Cmd
}

const masterName = "soak"

func (s *server) addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// freePort is a loopback port nothing listens on now.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// startServers starts the data nodes and the Sentinels in dir and waits
// until the Sentinels see the replica.
func startServers(dir, bin string) (*servers, error) {
	s := &servers{dir: dir, bin: bin}
	for i := range s.nodes {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		extra := ""
		if i == 1 {
			extra = "replicaof 127.0.0.1 " + strconv.Itoa(s.nodes[0].port) + "\n"
		}
		s.nodes[i] = &server{port: port}
		if err := s.write(s.nodes[i], "save \"\"\nappendonly no\n"+extra); err != nil {
			return nil, err
		}
		if err := s.start(s.nodes[i], false); err != nil {
			return nil, err
		}
	}
	for i := range s.sentinels {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		s.sentinels[i] = &server{port: port}
		conf := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %[1]s 2000\n"+
			"sentinel failover-timeout %[1]s 10000\n", masterName, s.nodes[0].port)
		if err := s.write(s.sentinels[i], conf); err != nil {
			return nil, err
		}
		if err := s.start(s.sentinels[i], true); err != nil {
			return nil, err
		}
	}
	return s, s.waitReplicated(30 * time.Second)
}

func (s *servers) write(n *server, extra string) error {
	n.conf = filepath.Join(s.dir, strconv.Itoa(n.port)+".conf")
	conf := fmt.Sprintf("port %d\nbind 127.0.0.1\ndir %s\nlogfile %s\n%s", n.port, s.dir,
		filepath.Join(s.dir, strconv.Itoa(n.port)+".log"), extra)
	return os.WriteFile(n.conf, []byte(conf), 0o644)
}

// start runs the server in the foreground of a child process and waits
// until it answers.
func (s *servers) start(n *server, sentinel bool) error {
	args := []string{n.conf}
	if sentinel {
		args = append(args, "--sentinel")
	}
	n.cmd = exec.Command(s.bin, args...)
	if err := n.cmd.Start(); err != nil {
		return err
	}
	c := redis.NewClient(&redis.Options{Addr: n.addr(), MaxRetries: -1})
	defer c.Close()
	return waitFor(10*time.Second, func() bool { return c.Ping(context.Background()).Err() == nil })
}

// kill ends a server with SIGKILL, as a crash would.
func (n *server) kill() {
	if n.cmd != nil {
		n.cmd.Process.Kill()
		n.cmd.Wait()
		n.cmd = nil
	}
}

// stop kills every server the soak started.
func (s *servers) stop() {
	for _, n := range append(s.nodes[:], s.sentinels[:]...) {
		if n != nil {
			n.kill()
		}
	}
}

// master is the data node the Sentinels name master.
func (s *servers) master() (*server, error) {
	for _, sn := range s.sentinels {
		c := redis.NewSentinelClient(&redis.Options{Addr: sn.addr(), MaxRetries: -1})
		addr, err := c.GetMasterAddrByName(context.Background(), masterName).Result()
		c.Close()
		if err != nil || len(addr) != 2 {
			continue
		}
		for _, n := range s.nodes {
			if strconv.Itoa(n.port) == addr[1] {
				return n, nil
			}
		}
	}
	return nil, fmt.Errorf("no Sentinel names the master")
}

// restart kills the master and starts it again at once, before the
// Sentinels would fail over: it comes back empty (it keeps nothing on
// disk), and its replica copies the empty data set.
//
// It returns how long the master was down.
func (s *servers) restart() (time.Duration, error) {
	m, err := s.master()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	m.kill()
	if err := s.start(m, false); err != nil {
		return time.Since(start), err
	}
	down := time.Since(start)
	return down, s.waitReplicated(30 * time.Second)
}

// failover kills the master and waits until the Sentinels have promoted
// the replica; then starts the old master again as the new one's replica.
// It returns how long there was no master.
func (s *servers) failover() (time.Duration, error) {
	m, err := s.master()
	if err != nil {
		return 0, err
	}
	start := time.Now()
	m.kill()
	err = waitFor(30*time.Second, func() bool { n, err := s.master(); return err == nil && n != m })
	took := time.Since(start)
	if err != nil {
		return took, fmt.Errorf("no failover: %w", err)
	}
	if err := s.start(m, false); err != nil {
		return took, err
	}
	n, _ := s.master()
	c := redis.NewClient(&redis.Options{Addr: m.addr(), MaxRetries: -1})
	defer c.Close()
	c.Do(context.Background(), "REPLICAOF", "127.0.0.1", n.port)
	return took, s.waitReplicated(30 * time.Second)
}

// waitReplicated waits until the master has its replica online.
func (s *servers) waitReplicated(within time.Duration) error {
	return waitFor(within, func() bool {
		m, err := s.master()
		if err != nil {
			return false
		}
		c := redis.NewClient(&redis.Options{Addr: m.addr(), MaxRetries: -1})
		defer c.Close()
		info, err := c.Info(context.Background(), "replication").Result()
		return err == nil && strings.Contains(info, "role:master") && strings.Contains(info, "connected_slaves:1") &&
			strings.Contains(info, "state=online")
	})
}

// waitFor asks cond every 20 ms until it holds or within has passed.
func waitFor(within time.Duration, cond func() bool) error {
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %v", within)
		}
		time.Sleep(20 * time.Millisecond) // servers change on their own clocks
	}
	return nil
}

// sentinelAddrs lists the Sentinels for the workers' clients.
func (s *servers) sentinelAddrs() string {
	var a []string
	for _, sn := range s.sentinels {
		a = append(a, sn.addr())
	}
	return strings.Join(a, ",")
}
