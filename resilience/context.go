package resilience

import (
	"context"
	"sync"
	"time"
)

// attemptCtx is an attempt's context: it ends at deadline, when the parent
// (the caller's context) ends, or when the attempt returns, like
// context.WithDeadline followed by cancel. It builds that real context only
// when fn asks for Done: an attempt that never waits on its context costs
// one small allocation and no timer, and Err is computed from the clock and
// the parent. Once built, every method defers to the real context, so
// context.Cause, AfterFunc and derived contexts behave as with the standard
// library.
type attemptCtx struct {
	parent   context.Context
	deadline time.Time

	mu     sync.Mutex
	real   context.Context
	cancel context.CancelFunc
	ended  bool
	held   bool // HoldAttemptContext: end waits for the holder
}

func (c *attemptCtx) Deadline() (time.Time, bool) { return c.deadline, true }

func (c *attemptCtx) Done() <-chan struct{} { return c.materialize().Done() }

// Value looks key up in the parent until the real context is built: the
// attempt context adds no values of its own, so a lookup (a logger's trace
// ID, say) needs no timer. Once built, the real context answers, because
// the standard library finds its cancelCtx through Value: a context derived
// from this one (net/http's Transport derives one per request) registers
// with that cancelCtx directly, where a lookup answered by the parent would
// make it start a goroutine to watch Done.
func (c *attemptCtx) Value(key any) any {
	c.mu.Lock()
	r := c.real
	c.mu.Unlock()
	if r == nil {
		return c.parent.Value(key)
	}
	return r.Value(key)
}

func (c *attemptCtx) Err() error {
	c.mu.Lock()
	r, ended := c.real, c.ended
	c.mu.Unlock()
	switch {
	case r != nil:
		return r.Err()
	case ended:
		return context.Canceled
	}
	if err := c.parent.Err(); err != nil {
		return err
	}
	if !time.Now().Before(c.deadline) {
		return context.DeadlineExceeded
	}
	return nil
}

func (c *attemptCtx) String() string { return "resilience.attemptContext" }

// materialize builds the real context on first use.
func (c *attemptCtx) materialize() context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.real == nil {
		c.real, c.cancel = context.WithDeadline(c.parent, c.deadline)
		if c.ended {
			c.cancel()
		}
	}
	return c.real
}

// end cancels the context: the attempt has returned. A held context is left
// to its holder.
func (c *attemptCtx) end() {
	c.mu.Lock()
	if c.held {
		c.mu.Unlock()
		return
	}
	c.ended = true
	cancel := c.cancel
	c.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// HoldAttemptContext keeps the context of the attempt running fn alive after
// fn returns, until the returned function is called; the attempt's deadline
// and the caller's cancellation still end it. It is for a result that is
// still being read when fn returns, such as an HTTP response body: without
// it the runner cancels the attempt's context as soon as fn returns, and the
// body's reads fail. Call the returned function exactly when the result is
// done with (further calls do nothing); a ctx that is not an attempt's
// context needs no hold, and its function does nothing.
func HoldAttemptContext(ctx context.Context) (release func()) {
	c, ok := ctx.(*attemptCtx)
	if !ok {
		return func() {}
	}
	c.mu.Lock()
	c.held = true
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.held = false
		c.mu.Unlock()
		c.end()
	}
}
