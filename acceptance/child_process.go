package acceptance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

// childStopGrace is how long a child server has to stop after its stop
// signal before its whole process group is killed.
const childStopGrace = 5 * time.Second

// childStartTimeout bounds a child's start when the caller's context has no
// deadline of its own.
const childStartTimeout = 15 * time.Second

// childProcess is an external server (nginx, HAProxy, node) the suite runs
// as a child process: in the foreground, in its own process group, in a
// temporary directory of its own that stop removes.
type childProcess struct {
	name string // the program, for messages: "nginx"
	url  string // http://127.0.0.1:port, once it listens
	cmd  *exec.Cmd
	dir  string
	// logs are the files whose tails explain a failure: its stderr, and
	// the error log of a server that keeps one.
	logs []string
	// stopSignal asks it to stop cleanly: SIGQUIT for nginx (its graceful
	// stop), SIGTERM for the others.
	stopSignal syscall.Signal
	// afterStop runs once the process has been reaped (closes the pipes
	// the suite reads).
	afterStop func()

	done    chan struct{} // closed once the process has exited and been reaped
	waitErr error         // Wait's result, set before done is closed

	stopOnce sync.Once
	stopErr  error
}

// childCommand is what startChild runs.
type childCommand struct {
	name       string
	path       string
	args       []string
	dir        string // its temporary directory, already made; stop removes it
	stopSignal syscall.Signal
	logs       []string // files beyond its stderr that explain a failure
	stdout     *os.File // nil: stdout goes to the stderr file
}

// startChild starts c. Its stderr goes to a file in c.dir, so no goroutine
// copies it and a crash leaves it to read. The child gets its stop signal
// when this process dies first, so a killed test run leaves no server
// behind (Pdeathsig: strictly when the OS thread that started it ends,
// which Go does only for a goroutine that locked its thread and returned).
func startChild(c childCommand) (*childProcess, error) {
	stderrPath := filepath.Join(c.dir, "stderr.log")
	stderr, err := os.Create(stderrPath)
	if err != nil {
		return nil, fmt.Errorf("starting %s: %w", c.name, err)
	}
	defer stderr.Close() // the child holds its own copy
	cmd := exec.Command(c.path, c.args...)
	cmd.Dir = c.dir
	cmd.Stdout = stderr
	if c.stdout != nil {
		cmd.Stdout = c.stdout
	}
	cmd.Stderr = stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: c.stopSignal}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s (%s): %w", c.name, c.path, err)
	}
	p := &childProcess{
		name:       c.name,
		cmd:        cmd,
		dir:        c.dir,
		logs:       append([]string{stderrPath}, c.logs...),
		stopSignal: c.stopSignal,
		done:       make(chan struct{}),
	}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// pgid is the child's process group: its own pid, as Setpgid made it.
func (p *childProcess) pgid() int { return p.cmd.Process.Pid }

// exited reports whether the child has exited.
func (p *childProcess) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// server is the child as the suite's Server.
func (p *childProcess) server() *Server { return &Server{URL: p.url, Close: p.stop} }

// stop asks the child to stop with its stop signal, kills its process
// group if it has not exited within childStopGrace, waits for it, and
// removes its directory. It reports a child that had to be killed or had
// already died; stopping twice does it once.
func (p *childProcess) stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.doStop() })
	return p.stopErr
}

func (p *childProcess) doStop() error {
	var errs []error
	if p.exited() {
		errs = append(errs, fmt.Errorf("%s had exited before it was stopped (%v)%s", p.name, p.waitErr, p.logTail()))
	} else {
		// Only the main process gets the signal: nginx's master then stops
		// its worker itself, gracefully.
		if err := p.cmd.Process.Signal(p.stopSignal); err != nil && !errors.Is(err, os.ErrProcessDone) {
			errs = append(errs, fmt.Errorf("signalling %s to stop: %w", p.name, err))
		}
		timer := time.NewTimer(childStopGrace)
		select {
		case <-p.done:
		case <-timer.C:
			// Killed while the group leader is still unreaped, so the group
			// id cannot belong to anybody else yet.
			if err := syscall.Kill(-p.pgid(), syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("killing %s's process group %d: %w", p.name, p.pgid(), err))
			}
			<-p.done
			errs = append(errs, fmt.Errorf("%s did not stop within %s of %s, so its process group was killed", p.name, childStopGrace, p.stopSignal))
		}
		timer.Stop()
	}
	if p.afterStop != nil {
		p.afterStop()
	}
	if err := os.RemoveAll(p.dir); err != nil {
		errs = append(errs, fmt.Errorf("removing %s's directory: %w", p.name, err))
	}
	return errors.Join(errs...)
}

// logTail is the end of the child's logs, for an error message: "" when
// they are empty.
func (p *childProcess) logTail() string {
	const keep = 1500
	var b strings.Builder
	for _, path := range p.logs {
		data, err := os.ReadFile(path)
		if err != nil || len(strings.TrimSpace(string(data))) == 0 {
			continue
		}
		if len(data) > keep {
			data = data[len(data)-keep:]
		}
		fmt.Fprintf(&b, "\n--- %s:\n%s", filepath.Base(path), strings.TrimSpace(string(data)))
	}
	return b.String()
}

// errPortTaken says a child could not bind the port it was given: another
// process took it between the probe and the child's bind.
var errPortTaken = errors.New("its port was taken")

// failed is the error for a child that did not come up: it stops the child,
// and says why with its logs' tail. A bind failure wraps errPortTaken.
func (p *childProcess) failed(why string) error {
	exited := p.exited()
	tail := p.logTail() // before stop removes the logs
	_ = p.stop()        // its own complaint adds nothing to why
	if exited {
		why = fmt.Sprintf("%s (%v)", why, p.waitErr)
	}
	if strings.Contains(tail, "Address already in use") {
		return fmt.Errorf("%s %s: %w%s", p.name, why, errPortTaken, tail)
	}
	return fmt.Errorf("%s %s%s", p.name, why, tail)
}

// waitHTTP polls GET p.url+path until it answers 200 with body want (a
// token that only this child serves, so a stranger on the port cannot pass
// for it), the child exits, or ctx (or childStartTimeout) ends. Polls are
// spaced 5 ms, doubling to 100 ms.
func (p *childProcess) waitHTTP(ctx context.Context, path, want string) error {
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, childStartTimeout)
		defer cancel()
	}
	// A poll stops when the child exits: a stranger holding the port may
	// accept the connection and never answer.
	pollCtx, cancelPolls := context.WithCancel(ctx)
	defer cancelPolls()
	go func() {
		select {
		case <-p.done:
			cancelPolls()
		case <-pollCtx.Done():
		}
	}()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	defer client.CloseIdleConnections()
	pause := 5 * time.Millisecond
	for {
		if ok, err := p.answers(pollCtx, client, p.url+path, want); ok {
			return nil
		} else if ctx.Err() != nil {
			return p.failed(fmt.Sprintf("did not answer GET %s%s before the start's deadline (last: %v)", p.url, path, err))
		}
		timer := time.NewTimer(pause)
		select {
		case <-p.done:
			timer.Stop()
			return p.failed("exited before it answered")
		case <-ctx.Done():
			timer.Stop()
			return p.failed(fmt.Sprintf("did not answer GET %s%s before the start's deadline", p.url, path))
		case <-timer.C:
		}
		pause = min(2*pause, 100*time.Millisecond)
	}
}

// answers reports whether url answers 200 with body want.
func (p *childProcess) answers(ctx context.Context, client *http.Client, url, want string) (bool, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return false, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return false, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<10))
	if err != nil {
		return false, err
	}
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != want {
		return false, fmt.Errorf("answered %d %q, want 200 %q", resp.StatusCode, body, want)
	}
	return true, nil
}
