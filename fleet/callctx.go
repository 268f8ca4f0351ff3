package fleet

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// callContext is the context of a shared limiter's call to Redis, of which
// it has one out at a time: the caller's context, ending at the earlier of
// the caller's deadline and the call's own (Options.Timeout). It is reused
// from call to call, so that a call allocates no context and no timer —
// context.WithTimeout's allocations were the largest share of an acquire's
// own.
//
// go-redis bounds a call's reads and writes by Deadline (with
// ContextTimeoutEnabled, which the constructors require), and its waits for
// a connection and between retries by Done, which closes at that deadline.
// A caller's cancellation before its deadline does not close Done: such a
// wait ends at the call's deadline instead, at most Options.Timeout later,
// and the limiter reads the caller's own context once the call returns.
//
// The timer that closes Done is not reset per call: every reset of a
// runtime timer may wake an idle thread to look at the new deadline (the
// runtime's wakeNetPoller), which at one caller can add a thread's wakeup
// to every acquire. It stays armed across calls at the deadline of
// the call that armed it; a later call, whose deadline is later, leaves it,
// and when it fires before the live call's deadline it re-arms itself for
// that deadline. So a stream of calls resets it about once per Timeout, and
// only a call whose deadline comes before the armed one resets it at once.
type callContext struct {
	context.Context // the caller's; set for the duration of a call

	timer   *time.Timer // closes done at the deadline
	expired atomic.Bool // done is closed

	mu       sync.Mutex
	deadline time.Time
	armedAt  time.Time // when the timer fires; zero when it is not armed
	done     chan struct{}
	live     bool // a call is out
}

func newCallContext() *callContext {
	c := &callContext{done: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	return c
}

// begin starts a call on behalf of ctx, at now, that may last timeout.
func (c *callContext) begin(ctx context.Context, now time.Time, timeout time.Duration) {
	deadline := now.Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.mu.Lock()
	if c.expired.Load() {
		c.done = make(chan struct{}) // only after a call that timed out
		c.expired.Store(false)
	}
	c.Context, c.deadline, c.live = ctx, deadline, true
	if c.armedAt.IsZero() || deadline.Before(c.armedAt) {
		c.armedAt = deadline
		c.timer.Reset(deadline.Sub(now))
	}
	c.mu.Unlock()
}

// end ends the call. The timer stays armed for the next.
func (c *callContext) end() {
	c.mu.Lock()
	c.live = false
	c.Context = nil
	c.mu.Unlock()
}

// expire runs when the timer fires: it closes done if a call is out and its
// deadline has come, and re-arms the timer for the deadline of a call that
// is out and has time left. A firing meant for an earlier call finds a
// later deadline, and re-arms.
func (c *callContext) expire() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.armedAt = time.Time{}
	if !c.live || c.expired.Load() {
		return
	}
	now := time.Now()
	if left := c.deadline.Sub(now); left > 0 {
		c.armedAt = c.deadline
		c.timer.Reset(left)
		return
	}
	c.expired.Store(true)
	close(c.done)
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callContext) Done() <-chan struct{} { return c.done }

func (c *callContext) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}
