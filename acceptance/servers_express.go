package acceptance

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Express is express-rate-limit 8.7 (npm, with Express 5) in a node
// process, in front of a route answering 200 "ok": windowMs = l.Window,
// limit = l.Units, the MemoryStore, keyed by the client's address, its
// default 429 status and body ("Too many requests, please try again
// later."). Only l.Units and l.Window apply; the spec's Limit drops the
// rest.
//
// h picks its headers, on every response, 200s and 429s alike:
//   - PublishDraft6: standardHeaders 'draft-6': RateLimit-Policy "5;w=1",
//     RateLimit-Limit, RateLimit-Remaining, RateLimit-Reset (seconds).
//   - PublishDraft7: 'draft-7': RateLimit "limit=5, remaining=4, reset=1",
//     RateLimit-Policy "5;w=1".
//   - PublishDraft8: 'draft-8': RateLimit `"5-in-1sec"; r=4; t=1`,
//     RateLimit-Policy `"5-in-1sec"; q=5; w=1; pk=:…:`.
//   - PublishXRateLimit: legacyHeaders: X-RateLimit-Limit, -Remaining,
//     -Reset (epoch seconds, rounded up).
//   - PublishNone: neither; then a 429 carries no Retry-After either.
//
// With any of them a 429 also carries Retry-After, the seconds to the
// window's end rounded up. Reset and w are rounded up to whole seconds
// too, so a window under a second is published as w=1. PublishRetryAfter
// alone is not something express-rate-limit does: Start refuses it.
//
// The MemoryStore's window, from its source: a client's window starts at
// its first request and lasts windowMs; every request in it counts, refused
// ones too, and the one that takes the count past limit, and every one after
// it, is refused. The first request at or after the window's end (Date.now()
// ≥ resetTime) starts a new window at that request, from a count of 0: the
// windows are per client and not aligned to the clock, nothing carries over
// from one window to the next, and refusals cost nothing beyond their own
// window.
//
// Allowance(d) = units · max(1, ⌈d/window⌉), for a client that begins with
// the server fresh: its first window opens with its first request at 0 and
// takes units at once, and a client that is back the instant each window
// ends opens the next at once, at window, 2·window, … — the windows that
// open before d. No client does better: every window holds at most units,
// and each begins no sooner than the last one ends.
func Express(l Limit, h Headers) ServerSpec {
	l = Limit{Units: l.Units, Window: l.Window}
	return ServerSpec{
		Name:    "express-rate-limit " + string(h),
		Kind:    FixedWindow,
		Limit:   l,
		Headers: h,
		Start: func(ctx context.Context) (*Server, error) {
			p, err := startExpress(ctx, l, h)
			if err != nil {
				return nil, err
			}
			return p.server(), nil
		},
		Allowance: func(d time.Duration) float64 { return expressAllowance(l, d) },
	}
}

// expressAllowance is Express's Allowance; 0 when express-rate-limit cannot
// take l.
func expressAllowance(l Limit, d time.Duration) float64 {
	if expressCheck(l) != nil {
		return 0
	}
	// A window opens at the first request after the last one ended: a
	// client that always has a request ready opens one every Window from
	// its first, and the windows that open before d are ⌈d/Window⌉ (the
	// first at once, even for d = 0).
	return float64(l.Units) * max(1, math.Ceil(float64(max(d, 0))/float64(l.Window)))
}

// expressCheck reports what in l express-rate-limit cannot take: windowMs is
// whole milliseconds, at most what setInterval takes.
func expressCheck(l Limit) error {
	switch {
	case l.Units <= 0:
		return fmt.Errorf("express-rate-limit's limit must be 1 request or more a window, got %d", l.Units)
	case l.Window < time.Millisecond || l.Window%time.Millisecond != 0:
		return fmt.Errorf("express-rate-limit's windowMs must be a whole number of milliseconds, at least 1, got %s", l.Window)
	case l.Window.Milliseconds() > 1<<31-1:
		return fmt.Errorf("express-rate-limit's windowMs must be at most 2^31-1 ms (about 24.8 days), got %s", l.Window)
	}
	return nil
}

// expressHeaderArgs is server.js's header flags for h.
func expressHeaderArgs(h Headers) ([]string, error) {
	standard, legacy := "false", "false"
	switch h {
	case PublishNone:
	case PublishDraft6, PublishDraft7, PublishDraft8:
		standard = string(h)
	case PublishXRateLimit:
		legacy = "true"
	case PublishRetryAfter:
		return nil, fmt.Errorf("express-rate-limit cannot publish Retry-After alone: it sends it on a 429 only with standard or legacy headers; use %s, %s, %s, %s or %s",
			PublishNone, PublishDraft6, PublishDraft7, PublishDraft8, PublishXRateLimit)
	default:
		return nil, fmt.Errorf("express-rate-limit: unknown Headers %q; use %s, %s, %s, %s or %s",
			h, PublishNone, PublishDraft6, PublishDraft7, PublishDraft8, PublishXRateLimit)
	}
	return []string{"--standard-headers", standard, "--legacy-headers", legacy}, nil
}

// expressDir is acceptance/express: beside this file when the suite runs
// from its source, as go test and go run do; else found from the working
// directory.
func expressDir() (string, error) {
	var tried []string
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		tried = append(tried, filepath.Join(filepath.Dir(file), "express"))
	}
	if wd, err := os.Getwd(); err == nil {
		tried = append(tried, filepath.Join(wd, "express"), filepath.Join(wd, "acceptance", "express"))
	}
	for _, dir := range tried {
		if _, err := os.Stat(filepath.Join(dir, "server.js")); err == nil {
			return dir, nil
		}
	}
	return "", fmt.Errorf("cannot find acceptance/express/server.js (looked in %v): run the suite from the repository", tried)
}

// expressModules checks that dir's node_modules holds what server.js
// imports; a *SkipError says how to install them when it does not.
func expressModules(dir string) error {
	for _, pkg := range []string{"express", "express-rate-limit"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			return &SkipError{Why: fmt.Sprintf("%s is not in %s: run %s, which runs npm ci there",
				pkg, filepath.Join(dir, "node_modules"), installScript)}
		}
	}
	return nil
}

// startExpress starts server.js with l and h and waits for its "listening
// <port>" line. It returns a *SkipError when node or the node modules are
// not installed.
func startExpress(ctx context.Context, l Limit, h Headers) (*childProcess, error) {
	if err := expressCheck(l); err != nil {
		return nil, err
	}
	headerArgs, err := expressHeaderArgs(h)
	if err != nil {
		return nil, err
	}
	node, err := findProgram("node", "apt-get install -y nodejs npm when node is missing")
	if err != nil {
		return nil, err
	}
	src, err := expressDir()
	if err != nil {
		return nil, err
	}
	if err := expressModules(src); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "headroom-express-")
	if err != nil {
		return nil, fmt.Errorf("making express's directory: %w", err)
	}
	// server.js says its port on stdout: node listens on port 0, so it
	// cannot lose a race for a port as nginx and HAProxy can.
	stdoutR, stdoutW, err := os.Pipe()
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("starting express: %w", err)
	}
	args := append([]string{filepath.Join(src, "server.js"),
		"--port", "0",
		"--window-ms", strconv.FormatInt(l.Window.Milliseconds(), 10),
		"--limit", strconv.Itoa(l.Units)}, headerArgs...)
	p, err := startChild(childCommand{name: "node (express-rate-limit)", path: node, args: args,
		dir: dir, stopSignal: syscall.SIGTERM, stdout: stdoutW})
	stdoutW.Close() // node has its own; EOF comes when node exits
	if err != nil {
		stdoutR.Close()
		os.RemoveAll(dir)
		return nil, err
	}
	ports := make(chan int, 1)
	read := make(chan struct{})
	go func() {
		defer close(read)
		lines := bufio.NewScanner(stdoutR)
		for lines.Scan() {
			if port, ok := strings.CutPrefix(lines.Text(), "listening "); ok {
				if n, err := strconv.Atoi(port); err == nil {
					select {
					case ports <- n:
					default:
					}
				}
			}
		}
		// A line too long for the scanner ends it early: keep the pipe
		// drained so node never blocks on it.
		io.Copy(io.Discard, stdoutR)
	}()
	p.afterStop = func() {
		<-read
		stdoutR.Close()
	}
	if err := p.waitListening(ctx, ports); err != nil {
		return nil, err
	}
	return p, nil
}

// waitListening waits for node's port on ports and sets p.url, or stops p
// and says why.
func (p *childProcess) waitListening(ctx context.Context, ports <-chan int) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, childStartTimeout)
		defer cancel()
	}
	select {
	case port := <-ports:
		p.url = fmt.Sprintf("http://127.0.0.1:%d", port)
		return nil
	case <-p.done:
		return p.failed(`exited before it printed "listening <port>"`)
	case <-ctx.Done():
		return p.failed(fmt.Sprintf(`did not print "listening <port>" before the start's deadline (%v)`, ctx.Err()))
	}
}
