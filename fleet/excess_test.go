package fleet

import (
	"context"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/headroom-go/headroom/limit"
)

// shape is a shared limit as the fault tests build it, with what its bound
// needs: PerSecond's rate and burst, or PerWindow's permits and window.
type shape struct {
	name    string
	rate    float64 // PerSecond: permits a second
	burst   int     // PerSecond: the burst; PerWindow: the permits
	window  time.Duration
	segment int
}

var faultShapes = []shape{
	{name: "PerSecond", rate: 200, burst: 20},
	{name: "PerWindow", burst: 100, window: 500 * time.Millisecond, segment: 50},
}

func (s shape) build(c redis.UniversalClient, o Options) (limit.Limiter, error) {
	if s.window == 0 {
		return PerSecond(c, s.rate, s.burst, o)
	}
	o.Segments = s.segment
	return PerWindow(c, s.burst, s.window, o)
}

// excess is the most the grants at the times given exceed the shape's own
// bound by, over any span: for PerSecond, admitted − (burst + d × rate)
// over every span d; for PerWindow, admitted − permits over every span of
// one window.
func (s shape) excess(grants []time.Duration) float64 {
	slices.Sort(grants)
	if s.window > 0 {
		most, j := 0, 0
		for i := range grants {
			for j < len(grants) && grants[j] < grants[i]+s.window {
				j++
			}
			most = max(most, j-i)
		}
		return float64(most - s.burst)
	}
	// max over i ≤ j of (j − i + 1) − burst − (t_j − t_i) × rate: with
	// f(k) = k − t_k × rate, the largest f(j) − f(i) + 1, in one pass.
	worst, lowest := math.Inf(-1), math.Inf(1)
	for k, t := range grants {
		f := float64(k) - t.Seconds()*s.rate
		lowest = min(lowest, f)
		worst = max(worst, f-lowest+1)
	}
	return worst - float64(s.burst)
}

// faultBound is docs/fleet.md's bound on the excess during a fault, in
// permits: what the fault may make the store forget (lost: one bucket,
// burst, for PerSecond; one window's permits for PerWindow; 0 when
// nothing is lost, as in a reshard), plus what the k of n processes that
// fail open admit on their shares over the time onShare they spend on
// them, plus what each process holds in flight: max(Batch, callers) + c − 1
// for calls of cost c (c = 1 here, Batch 0).
func (s shape) faultBound(lost bool, k, n, callers int, onShare time.Duration) float64 {
	inflight := float64(n * callers)
	var store, shares float64
	if lost {
		store = float64(s.burst)
	}
	if s.window > 0 {
		shares = float64(k) * float64(max(s.burst/n, 1))
	} else {
		shares = float64(k) * (float64(max(s.burst/n, 1)) + onShare.Seconds()*s.rate/float64(n))
	}
	return store + shares + inflight
}

// tally is what a fault test's callers saw.
type tally struct {
	start time.Time

	mu          sync.Mutex
	grants      []time.Duration // since start
	byProcess   map[int][]time.Duration
	shareGrants []time.Duration // granted by a share while failing open
	unavailable []time.Duration // ErrUnavailable, failing closed
	lastCause   error           // the last ErrUnavailable's
	// untimely are the ErrUnavailable whose cause is not a call's timeout:
	// an error Redis answered, or one go-redis did not follow.
	untimely  []error
	throttled int
	late      []time.Duration // calls that ended past their deadline, by how much
	lost      []error         // neither a lease nor a typed error
}

func newTally() *tally { return &tally{start: time.Now(), byProcess: map[int][]time.Duration{}} }

func (t *tally) since() time.Duration { return time.Since(t.start) }

// callDeadline bounds each acquire of the fault tests, and lateness is
// counted past it plus callSlack (the scheduler's, on a loaded machine).
const (
	callDeadline = 300 * time.Millisecond
	callSlack    = 100 * time.Millisecond
)

// call makes one acquire of lim within callDeadline, notes how it ended,
// and returns its error.
func (t *tally) call(process int, lim limit.Limiter) error {
	ctx, cancel := context.WithTimeout(context.Background(), callDeadline)
	defer cancel()
	start := time.Now()
	lease, err := lim.Acquire(ctx)
	took := time.Since(start)
	var rl *limit.RateLimitedError
	t.mu.Lock()
	defer t.mu.Unlock()
	if took > callDeadline+callSlack {
		t.late = append(t.late, took-callDeadline)
	}
	switch {
	case err == nil:
		now := t.since()
		t.grants = append(t.grants, now)
		t.byProcess[process] = append(t.byProcess[process], now)
		lease.Release()
	case errors.As(err, &rl):
		t.throttled++
	case errors.Is(err, ErrUnavailable):
		t.unavailable = append(t.unavailable, t.since())
		t.lastCause = err
		if !strings.Contains(err.Error(), "no answer within") {
			t.untimely = append(t.untimely, err)
		}
	default:
		t.lost = append(t.lost, err)
	}
	return err
}

// pauseAfter is a caller's after a refusal or while Redis is away: the
// RetryAfter, at most 10 ms, as a program's callers back off.
func pauseAfter(err error) {
	var rl *limit.RateLimitedError
	d := 10 * time.Millisecond
	if errors.As(err, &rl) {
		d = min(rl.RetryAfter, d)
	}
	if err != nil {
		time.Sleep(d) // a caller's back-off, not a test's wait
	}
}

// shareRecorder wraps a failing-open limiter's share, noting its grants.
type shareRecorder struct {
	limit.Limiter
	t *tally
}

func (s shareRecorder) AcquireN(ctx context.Context, cost int) (limit.Lease, error) {
	lease, err := s.Limiter.AcquireN(ctx, cost)
	if err == nil {
		s.t.mu.Lock()
		s.t.shareGrants = append(s.t.shareGrants, s.t.since())
		s.t.mu.Unlock()
	}
	return lease, err
}

// recordShare makes lim's share note its grants in t.
func recordShare(lim limit.Limiter, t *tally) {
	l := lim.(*limiter)
	build := l.share.build
	l.share.build = func(n int) (limit.Limiter, error) {
		s, err := build(n)
		if err != nil {
			return nil, err
		}
		return shareRecorder{s, t}, nil
	}
}

// drive runs callers goroutines on each limiter until stop closes.
func (t *tally) drive(lims []limit.Limiter, callers int, stop <-chan struct{}) *sync.WaitGroup {
	var wg sync.WaitGroup
	for i, lim := range lims {
		for range callers {
			wg.Go(func() {
				for {
					select {
					case <-stop:
						return
					default:
					}
					pauseAfter(t.call(i, lim))
				}
			})
		}
	}
	return &wg
}

// driveFor runs callers goroutines on each limiter for d.
func (t *tally) driveFor(lims []limit.Limiter, callers int, d time.Duration) {
	stop := make(chan struct{})
	wg := t.drive(lims, callers, stop)
	timer := time.NewTimer(d)
	<-timer.C
	close(stop)
	wg.Wait()
}

// check holds a run to what every fault test asks: every call ended with a
// lease or a typed error, none past its deadline.
func (t *tally) check(tb testing.TB) {
	tb.Helper()
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.lost) > 0 {
		tb.Errorf("%d calls ended with neither a lease nor a typed error, the first: %v", len(t.lost), t.lost[0])
	}
	if len(t.late) > 0 {
		tb.Errorf("%d calls ended past their deadline of %v (by up to %v)", len(t.late), callDeadline, slices.Max(t.late))
	}
}

// resumed is how long after at the processes from..to-1 were all granted
// a lease again: the longest wait for a process's first grant after at.
func (t *tally) resumed(at time.Duration, from, to int) time.Duration {
	t.mu.Lock()
	defer t.mu.Unlock()
	longest := time.Duration(0)
	for p := from; p < to; p++ {
		i, _ := slices.BinarySearch(t.byProcess[p], at)
		if i == len(t.byProcess[p]) {
			return time.Duration(math.MaxInt64)
		}
		longest = max(longest, t.byProcess[p][i]-at)
	}
	return longest
}

// span is the time from the first to the last of ts; 0 for none.
func span(ts []time.Duration) time.Duration {
	if len(ts) == 0 {
		return 0
	}
	return slices.Max(ts) - slices.Min(ts)
}
