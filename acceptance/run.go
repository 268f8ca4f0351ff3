package acceptance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/headroom-go/headroom/limit"
)

// DefaultCallTimeout is each call's deadline, retries included.
const DefaultCallTimeout = 30 * time.Second

// DefaultFailurePause is how long a caller waits after a failed call
// before its next one.
const DefaultFailurePause = 100 * time.Millisecond

// stragglerGrace is how long a run waits, after its end, for callers whose
// client ignores the cancellation before it reports them.
const stragglerGrace = 30 * time.Second

// RunOptions says which clients a cell compares and how.
type RunOptions struct {
	// Subject is the client the goals judge; zero means Headroom.
	Subject ClientMaker
	// Peer is the client it is compared with; zero means RetryableHTTP.
	Peer ClientMaker
	// Sequential runs the peer after the subject instead of beside it: a
	// cell then takes twice its duration, but the two runs do not share the
	// machine's cores.
	Sequential bool
	// CallTimeout is each call's deadline; 0 means DefaultCallTimeout.
	CallTimeout time.Duration
	// FailurePause is how long a caller waits after a failed call before
	// its next; 0 means DefaultFailurePause, negative none. A client that
	// fails a call at once would otherwise turn its callers into busy
	// loops that take the cores from the other client's run, and from its
	// own server. Both clients get the same pause.
	FailurePause time.Duration
}

func (o RunOptions) withDefaults() RunOptions {
	if o.Subject.New == nil {
		o.Subject = Headroom
	}
	if o.Peer.New == nil {
		o.Peer = RetryableHTTP
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	if o.FailurePause == 0 {
		o.FailurePause = DefaultFailurePause
	}
	return o
}

// CellResult is what both clients did in one cell.
type CellResult struct {
	Cell    Cell
	Subject Result // the client the goals judge (headroom)
	Peer    Result // the client it is compared with (go-retryablehttp)
	// Skipped says why the cell did not run ("" when it ran).
	Skipped string
	// Misses are the goals the subject missed, one readable line each.
	Misses []string
}

// RunCell runs c: a fresh server and a fresh client for each of the two
// clients, both runs at once (or one after the other with Sequential),
// then checks the subject against the cell's goals. When a server cannot
// start because something is missing, the result says Skipped and the
// error is the *SkipError. When ctx ends before the run does, the error
// says so and the result holds no figures.
func RunCell(ctx context.Context, c Cell, o RunOptions) (CellResult, error) {
	res := CellResult{Cell: c}
	if err := c.Validate(); err != nil {
		return res, err
	}
	o = o.withDefaults()
	runs := []*run{
		{maker: o.Subject, cell: c, callTimeout: o.CallTimeout, failurePause: o.FailurePause},
		{maker: o.Peer, cell: c, callTimeout: o.CallTimeout, failurePause: o.FailurePause},
	}
	defer func() {
		for _, r := range runs {
			r.close()
		}
	}()

	if o.Sequential {
		for _, r := range runs {
			if err := r.prepare(ctx); err != nil {
				return skipped(res, err)
			}
			if err := r.drive(ctx, time.Now()); err != nil {
				return res, err
			}
			r.close()
		}
	} else {
		for _, r := range runs {
			if err := r.prepare(ctx); err != nil {
				return skipped(res, err)
			}
		}
		start := time.Now()
		errs := make([]error, len(runs))
		var wg sync.WaitGroup
		for i, r := range runs {
			wg.Go(func() { errs[i] = r.drive(ctx, start) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return res, err
		}
	}
	if err := ctx.Err(); err != nil {
		// Cancelled before D: the figures are of a shorter run than the
		// allowance's.
		return res, fmt.Errorf("cell %q: interrupted: %w", c.Name, err)
	}
	res.Subject, res.Peer = runs[0].result(), runs[1].result()
	res.Misses = c.goals().Check(res)
	return res, nil
}

func skipped(res CellResult, err error) (CellResult, error) {
	var s *SkipError
	if errors.As(err, &s) {
		res.Skipped = s.Why
	}
	return res, err
}

// Result is what one client did in one run of a cell.
type Result struct {
	Client string
	// Duration is the run's length D, from the callers' start.
	Duration time.Duration
	// Allowance is the server's Allowance(D): the units an ideal client
	// would have had accepted.
	Allowance float64
	// Units is the sum of the costs of the calls that ended with a 2xx
	// response before D.
	Units int64
	// Succeeded counts those calls.
	Succeeded int
	// Failed counts the calls that ended before D with an error or a final
	// response that was not 2xx.
	Failed int
	// SelfImposed counts the failed calls whose error was the client's own
	// limiter refusing (errors.Is(err, limit.ErrRateLimited)) while their
	// deadline still had time left.
	SelfImposed int
	// CutOff counts the calls the end of the run cut off: neither
	// successes nor failures.
	CutOff int
	// Failures counts the failed calls by what ended them;
	// FailureExamples holds the first error text of each kind.
	Failures        map[string]int
	FailureExamples map[string]string
	// Attempts is how many attempts reached the wire before D and came
	// back with a response or a network error; Throttled how many of those
	// were answered 429 or 503; NetworkErrors how many failed on the
	// network; Unavailable how many of the throttled were 503s. Cancelled counts the attempts cut off by their call's
	// deadline or the run's end, outside Attempts.
	Attempts, Throttled, Unavailable, NetworkErrors, Cancelled int64
	// P50 and P95 are the nearest-rank percentiles of the call time of the
	// calls that ended before D, successes and failures alike.
	P50, P95 time.Duration
}

// Share is Units over Allowance.
func (r Result) Share() float64 { return ratio(float64(r.Units), r.Allowance) }

// ThrottledShare is Throttled over Attempts.
func (r Result) ThrottledShare() float64 {
	return ratio(float64(r.Throttled), float64(r.Attempts))
}

// run is one client against one fresh server for one cell.
type run struct {
	maker        ClientMaker
	cell         Cell
	callTimeout  time.Duration
	failurePause time.Duration

	server  *Server
	counter *attemptCounter
	client  *Client
	target  string // the URL every call requests
	end     time.Time
	closed  bool

	mu        sync.Mutex
	res       Result
	durations []time.Duration
}

// prepare starts the server and builds the client over a counting base
// transport.
func (r *run) prepare(ctx context.Context) error {
	srv, err := r.cell.Server.Start(ctx)
	if err != nil {
		if IsSkip(err) {
			return err
		}
		return fmt.Errorf("cell %q: starting %s for %s: %w", r.cell.Name, r.cell.Server.Name, r.maker.Name, err)
	}
	r.server = srv
	u, err := url.Parse(srv.URL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("cell %q: server %s has URL %q, want http://host:port", r.cell.Name, r.cell.Server.Name, srv.URL)
	}
	r.target = srv.URL + "/"
	r.counter = newAttemptCounter(r.cell.Callers, time.Time{})
	client, err := r.maker.New(r.counter)
	if err != nil {
		return fmt.Errorf("cell %q: making client %s: %w", r.cell.Name, r.maker.Name, err)
	}
	r.client = client
	return nil
}

// drive runs the callers from start until start + the cell's duration,
// then waits for them to return.
func (r *run) drive(parent context.Context, start time.Time) error {
	r.end = start.Add(r.cell.Duration)
	r.counter.end = r.end
	r.res = Result{Client: r.maker.Name, Duration: r.cell.Duration,
		Failures: map[string]int{}, FailureExamples: map[string]string{}}
	// The run's end cancels the calls in progress; it is no deadline of
	// theirs: a call's deadline is its own (CallTimeout), and a client that
	// foresaw a wait past the run's end would refuse the call as one that
	// cannot meet its deadline.
	ctx, cancel := context.WithCancel(parent)
	defer cancel()
	stop := time.AfterFunc(time.Until(r.end), cancel)
	defer stop.Stop()

	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range r.cell.Callers {
		rng := rand.New(rand.NewPCG(r.cell.Seed, uint64(i)))
		wg.Go(func() {
			for ctx.Err() == nil {
				if !r.call(ctx, r.cell.Costs.Draw(rng)) && r.failurePause > 0 {
					pause(ctx, r.failurePause)
				}
			}
		})
	}
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-time.After(time.Until(r.end) + stragglerGrace):
		return fmt.Errorf("cell %q: %s: callers still calling %s after the end of the run (a call that ignores its context's cancellation)",
			r.cell.Name, r.maker.Name, stragglerGrace)
	}
}

// call makes one call of cost units, records how it ended, and reports
// whether it succeeded.
func (r *run) call(runCtx context.Context, cost int) bool {
	ctx, cancel := context.WithTimeout(runCtx, r.callTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.target, nil)
	if err != nil {
		// prepare checked the URL; nothing else can fail here.
		r.record(time.Now(), 0, cost, 0, err, true)
		return false
	}
	req.Header.Set(CostHeader, strconv.Itoa(cost))
	start := time.Now()
	resp, err := r.client.HTTP.Do(req)
	status := 0
	if err == nil {
		status = resp.StatusCode
		_, err = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	end := time.Now()
	r.record(end, end.Sub(start), cost, status, err, couldWait(ctx, end, err))
	return err == nil && status >= 200 && status < 300
}

// couldWait reports whether a call that ended at end with err still had
// time on its deadline to wait for what err asked it to: for a refusal of
// the client's own, its RetryAfter. A refusal whose wait would outlast the
// deadline is the client saying at once that the call cannot succeed in
// time, which is right, not a call it gave up on.
func couldWait(ctx context.Context, end time.Time, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	dl, ok := ctx.Deadline()
	if !ok {
		return true
	}
	if rl, isRefusal := errors.AsType[*limit.RateLimitedError](err); isRefusal {
		return end.Add(rl.RetryAfter).Before(dl)
	}
	return true
}

// pause waits for d or until ctx ends.
func pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// record files one call that ended at end after taking took. timeLeft says
// its deadline still allowed the wait its error named (couldWait).
func (r *run) record(end time.Time, took time.Duration, cost, status int, err error, timeLeft bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !end.Before(r.end) || (err != nil && errors.Is(err, context.Canceled)) {
		r.res.CutOff++
		return
	}
	r.durations = append(r.durations, took)
	if err == nil && status >= 200 && status < 300 {
		r.res.Succeeded++
		r.res.Units += int64(cost)
		return
	}
	r.res.Failed++
	kind := failureKind(status, err, timeLeft)
	r.res.Failures[kind]++
	if _, seen := r.res.FailureExamples[kind]; !seen {
		r.res.FailureExamples[kind] = failureText(status, err)
	}
	if err != nil && errors.Is(err, limit.ErrRateLimited) && timeLeft {
		r.res.SelfImposed++
	}
}

// result is the run's Result once drive has returned.
func (r *run) result() Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	res := r.res
	res.Allowance = r.cell.Server.Allowance(r.cell.Duration)
	res.Attempts = r.counter.attempts.Load()
	res.Throttled = r.counter.throttled.Load()
	res.Unavailable = r.counter.unavailable.Load()
	res.NetworkErrors = r.counter.networkErrors.Load()
	res.Cancelled = r.counter.cancelled.Load()
	res.P50 = percentile(r.durations, 0.50)
	res.P95 = percentile(r.durations, 0.95)
	return res
}

// close releases the client, its connections and the server, in that
// order; it may be called more than once.
func (r *run) close() {
	if r.closed {
		return
	}
	r.closed = true
	if r.client != nil && r.client.Close != nil {
		r.client.Close()
	}
	if r.counter != nil {
		r.counter.CloseIdleConnections()
	}
	if r.server != nil && r.server.Close != nil {
		r.server.Close()
	}
}
