// Command soak runs a fleet of processes sharing four limits through Redis
// for a long time, while the Redis servers under it are killed and
// restarted twice and failed over once, and checks what a fleet must keep
// through it all:
//
//   - admitted permits per window stay within what each limit allows, and
//     within the stated fault bound in the windows around each fault;
//   - every acquire ends with a lease or a typed error, in time;
//   - goroutines return to where they started, the heap does not grow
//     without bound, and Redis holds no key of the fleet one TTL after the
//     end.
//
// It starts its own Redis servers (a master and a replica behind three
// Sentinels, from redis-server, on free loopback ports) and stops exactly
// them. Run it from the repository's root:
//
//	go run ./fleet/cmd/soak -duration 10m
//
// It prints its measurements and exits 1 if a check failed.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"time"
)

func main() {
	duration := flag.Duration("duration", 10*time.Minute, "how long the fleet runs")
	processes := flag.Int("processes", 8, "the fleet's processes")
	bin := flag.String("redis-server", "redis-server", "the redis-server to run")
	worker := flag.Bool("worker", false, "run as one process of the fleet (the soak starts these itself)")
	flag.Parse()
	if *worker {
		if err := runWorker(*duration); err != nil {
			fmt.Fprintln(os.Stderr, "soak worker:", err)
			os.Exit(2)
		}
		return
	}
	ok, err := run(*duration, *processes, *bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(2)
	}
	if !ok {
		os.Exit(1)
	}
}

// fault is one fault of the run, on the wall clock: from start, the master
// was down for down; by end the replica had caught up again.
type fault struct {
	what       string
	start, end time.Time
	down       time.Duration
}

// run runs the soak and reports whether every check held.
func run(duration time.Duration, processes int, bin string) (bool, error) {
	goroutines := runtime.NumGoroutine()
	dir, err := os.MkdirTemp("", "headroom-soak-")
	if err != nil {
		return false, err
	}
	defer os.RemoveAll(dir)
	srv, err := startServers(dir, bin)
	if srv != nil {
		defer srv.stop()
	}
	if err != nil {
		return false, fmt.Errorf("starting Redis: %w", err)
	}
	var rnd [4]byte
	rand.Read(rnd[:])
	prefix := "headroom-soak-" + hex.EncodeToString(rnd[:])
	memStart := usedMemory(srv)
	cmds, outs, err := startWorkers(processes, duration, srv.sentinelAddrs(), prefix)
	if err != nil {
		return false, err
	}
	start := time.Now()
	faults, ferr := inject(srv, duration, start)
	reports, werr := waitWorkers(cmds, outs)
	if ferr != nil || werr != nil {
		return false, fmt.Errorf("faults: %v; workers: %v", ferr, werr)
	}
	left, keysAt := keysLeft(srv, prefix)
	rep := &report{duration: duration, processes: processes, start: start, faults: faults, workers: reports,
		keysLeft: left, keysAt: keysAt, memStart: memStart, memEnd: usedMemory(srv)}
	srv.stop()
	rep.goroutines = [2]int{goroutines, runtime.NumGoroutine()}
	return rep.print(os.Stdout), nil
}

// startWorkers starts the fleet: this program again, with -worker.
func startWorkers(n int, duration time.Duration, sentinels, prefix string) ([]*exec.Cmd, []*bytes.Buffer, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	var cmds []*exec.Cmd
	var outs []*bytes.Buffer
	for range n {
		cmd := exec.Command(self, "-worker", "-duration", duration.String())
		cmd.Env = append(os.Environ(), "SOAK_SENTINELS="+sentinels, "SOAK_PREFIX="+prefix)
		out := &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = out, os.Stderr
		if err := cmd.Start(); err != nil {
			return cmds, outs, err
		}
		cmds, outs = append(cmds, cmd), append(outs, out)
	}
	return cmds, outs, nil
}

func waitWorkers(cmds []*exec.Cmd, outs []*bytes.Buffer) ([]workerReport, error) {
	var reports []workerReport
	var first error
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil && first == nil {
			first = fmt.Errorf("worker %d: %w", i, err)
		}
		var r workerReport
		if err := json.Unmarshal(outs[i].Bytes(), &r); err != nil && first == nil {
			first = fmt.Errorf("worker %d's report: %w", i, err)
		}
		reports = append(reports, r)
	}
	return reports, first
}

// inject makes the run's faults: the master killed and restarted at a fifth
// of the run, killed for good and failed over at half, killed and
// restarted again at three quarters.
func inject(srv *servers, duration time.Duration, start time.Time) ([]fault, error) {
	plan := []struct {
		what string
		at   float64
		do   func() (time.Duration, error)
	}{
		{"restart", 0.2, srv.restart},
		{"failover", 0.5, srv.failover},
		{"restart", 0.75, srv.restart},
	}
	var faults []fault
	for _, p := range plan {
		time.Sleep(time.Until(start.Add(time.Duration(p.at * float64(duration))))) // the soak's schedule
		f := fault{what: p.what, start: time.Now()}
		down, err := p.do()
		f.end, f.down = time.Now(), down
		faults = append(faults, f)
		if err != nil {
			return faults, fmt.Errorf("%s: %w", p.what, err)
		}
	}
	return faults, nil
}
