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
type callContext struct {
	context.Context // the caller's; set for the duration of a call

	timer   *time.Timer // closes done at the deadline
	expired atomic.Bool // done is closed

	mu       sync.Mutex
	deadline time.Time
	done     chan struct{}
	live     bool // a call is out
}

func newCallContext() *callContext {
	c := &callContext{done: make(chan struct{})}
	c.timer = time.AfterFunc(time.Hour, c.expire)
	c.timer.Stop()
	return c
}

// begin starts a call on behalf of ctx that may last timeout.
func (c *callContext) begin(ctx context.Context, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	c.mu.Lock()
	if c.expired.Load() {
		c.done = make(chan struct{}) // only after a call that timed out
		c.expired.Store(false)
	}
	c.Context, c.deadline, c.live = ctx, deadline, true
	c.mu.Unlock()
	c.timer.Reset(time.Until(deadline))
}

// end ends the call.
func (c *callContext) end() {
	c.timer.Stop()
	c.mu.Lock()
	c.live = false
	c.Context = nil
	c.mu.Unlock()
}

// expire closes done if a call is out and its deadline has come: a timer
// of an earlier call that fires late finds a later deadline and does
// nothing.
func (c *callContext) expire() {
	c.mu.Lock()
	if c.live && !c.expired.Load() && !time.Now().Before(c.deadline) {
		c.expired.Store(true)
		close(c.done)
	}
	c.mu.Unlock()
}

func (c *callContext) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *callContext) Done() <-chan struct{} { return c.done }

func (c *callContext) Err() error {
	if c.expired.Load() {
		return context.DeadlineExceeded
	}
	return c.Context.Err()
}
