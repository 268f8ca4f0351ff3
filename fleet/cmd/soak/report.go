package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// report is what the soak measured, and its checks.
type report struct {
	duration   time.Duration
	processes  int
	start      time.Time
	faults     []fault
	workers    []workerReport
	keysLeft   int           // keys of the fleet left after keysAt
	keysAt     time.Duration // how long after the end the last key went
	memStart   int64         // Redis's used_memory before the run
	memEnd     int64         // and at the end, once the keys expired
	goroutines [2]int        // the soak's own, at its start and end
}

// keysTTL is how long the fleet's keys may outlive it: the longest window
// (the key expires a window after its last grant), plus a second.
const keysTTL = 11 * time.Second

// keysLeft waits until Redis holds no key of the fleet, at most keysTTL
// past the workers' end, and returns how many are left and when the last
// one went.
func keysLeft(srv *servers, prefix string) (int, time.Duration) {
	m, err := srv.master()
	if err != nil {
		return -1, 0
	}
	c := redis.NewClient(&redis.Options{Addr: m.addr(), MaxRetries: -1})
	defer c.Close()
	start := time.Now()
	count := func() int {
		keys, _, err := c.Scan(context.Background(), 0, "{"+prefix+":*", 10000).Result()
		if err != nil {
			return -1
		}
		return len(keys)
	}
	n := count()
	for n != 0 && time.Since(start) < keysTTL+time.Second {
		time.Sleep(100 * time.Millisecond) // keys expire on the server's clock
		n = count()
	}
	return n, time.Since(start)
}

// usedMemory is the master's used_memory, or -1.
func usedMemory(srv *servers) int64 {
	m, err := srv.master()
	if err != nil {
		return -1
	}
	c := redis.NewClient(&redis.Options{Addr: m.addr(), MaxRetries: -1})
	defer c.Close()
	info, err := c.Info(context.Background(), "memory").Result()
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

// print writes the report and returns whether every check held.
func (r *report) print(w io.Writer) bool {
	ok := true
	check := func(good bool, format string, args ...any) {
		mark := "ok  "
		if !good {
			mark, ok = "FAIL", false
		}
		fmt.Fprintf(w, "%s "+format+"\n", append([]any{mark}, args...)...)
	}
	fmt.Fprintf(w, "soak: %d processes × %d limiters × %d callers, mixed costs, for %v\n", r.processes, len(specs), callers, r.duration)
	for _, f := range r.faults {
		fmt.Fprintf(w, "     %s of the master at %v: down %v, replicated again after %v\n", f.what,
			f.start.Sub(r.start).Round(time.Millisecond), f.down.Round(time.Millisecond), f.end.Sub(f.start).Round(time.Millisecond))
	}
	var t workerReport
	t.Latency = make([]int64, latencyBuckets)
	for _, wr := range r.workers {
		t.Granted, t.Refused, t.Unavailable, t.Lost, t.Late = t.Granted+wr.Granted, t.Refused+wr.Refused,
			t.Unavailable+wr.Unavailable, t.Lost+wr.Lost, t.Late+wr.Late
		for i, n := range wr.Latency {
			t.Latency[i] += n
		}
	}
	fmt.Fprintf(w, "     acquires: %d granted, %d refused, %d ErrUnavailable; p50 %v, p99 %v, p99.9 %v\n",
		t.Granted, t.Refused, t.Unavailable, quantile(t.Latency, 0.5), quantile(t.Latency, 0.99), quantile(t.Latency, 0.999))
	check(t.Lost == 0, "every acquire ended with a lease or a typed error (%d did not)", t.Lost)
	check(t.Late == 0, "no acquire ended more than %v past its %v deadline (%d did)", lateSlack, callDeadline, t.Late)
	for _, s := range specs {
		r.checkLimit(s, check, w)
	}
	r.checkResources(check)
	return ok
}

// quantile is the latency below which q of the acquires ended: the upper
// edge of the bucket that holds it.
func quantile(hist []int64, q float64) time.Duration {
	var total, sum int64
	for _, n := range hist {
		total += n
	}
	for i, n := range hist {
		if sum += n; float64(sum) >= q*float64(total) {
			return time.Duration(math.Pow(1.1, float64(i+1))) * time.Microsecond
		}
	}
	return 0
}
