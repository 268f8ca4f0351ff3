package resilience

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

type ctxKey struct{}

// A value lookup answers from the parent without building the real context
// (and its timer); once Done built it, the lookup still finds the value.
func TestAttemptContextValue(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		parent := context.WithValue(t.Context(), ctxKey{}, "trace-1")
		c := &attemptCtx{parent: parent, deadline: time.Now().Add(time.Second)}
		defer c.end()
		if v := c.Value(ctxKey{}); v != "trace-1" {
			t.Errorf("Value = %v before Done; want trace-1", v)
		}
		if c.real != nil {
			t.Error("a value lookup built the real context")
		}
		c.Done()
		if v := c.Value(ctxKey{}); v != "trace-1" {
			t.Errorf("Value = %v after Done; want trace-1", v)
		}
	})
}

// context.Cause finds the caller's cause through a context that was never
// built, and the attempt's own end when the caller gave none.
func TestAttemptContextCause(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		cause := errors.New("shutting down")
		parent, cancel := context.WithCancelCause(t.Context())
		c := &attemptCtx{parent: parent, deadline: time.Now().Add(time.Second)}
		time.Sleep(time.Second)
		if got := context.Cause(c); got != context.DeadlineExceeded {
			t.Errorf("Cause = %v after the attempt's deadline; want DeadlineExceeded", got)
		}
		cancel(cause)
		if got := context.Cause(c); got != cause {
			t.Errorf("Cause = %v after the caller's cancellation; want %v", got, cause)
		}
		c.end()
	})
}
