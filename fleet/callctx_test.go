package fleet

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// callTimesOut begins a call of ctx on c with a timeout of 1s, checks in
// the bubble that its Done closes want after it began, and ends it.
func callTimesOut(t *testing.T, ctx context.Context, c *callContext, want time.Duration) {
	t.Helper()
	start := time.Now()
	c.begin(ctx, start, time.Second)
	defer c.end()
	limit := time.NewTimer(2 * time.Second)
	defer limit.Stop()
	select {
	case <-c.Done():
		if got := time.Since(start); got != want {
			t.Errorf("Done closed %v after the call began, want %v", got, want)
		}
		if !errors.Is(c.Err(), context.DeadlineExceeded) {
			t.Errorf("Err = %v once Done closed, want context.DeadlineExceeded", c.Err())
		}
	case <-limit.C:
		t.Errorf("Done still open 2s after the call began, want closed after %v", want)
	}
}

// A call's Done closes at its own deadline, though the timer was armed by
// an earlier call for an earlier deadline: that firing re-arms it.
func TestCallContextClosesAtTheLiveCallsDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCallContext()
		c.begin(context.Background(), time.Now(), time.Second)
		c.end()
		time.Sleep(600 * time.Millisecond)
		callTimesOut(t, context.Background(), c, time.Second)
	})
}

// A caller's deadline earlier than the armed timer is kept: Done closes at
// it.
func TestCallContextClosesAtAnEarlierCallerDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCallContext()
		c.begin(context.Background(), time.Now(), time.Second)
		c.end()
		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		callTimesOut(t, ctx, c, 300*time.Millisecond)
	})
}

// Calls that end in time never close Done, however long the stream of
// them lasts, and a call after one that timed out gets an open Done.
func TestCallContextStaysOpenForCallsThatEndInTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := newCallContext()
		for range 50 { // 5 s of calls, 100 ms apart: the timer fires and re-arms
			c.begin(context.Background(), time.Now(), time.Second)
			time.Sleep(50 * time.Millisecond)
			select {
			case <-c.Done():
				t.Fatal("Done closed during a call before its deadline")
			default:
			}
			c.end()
			time.Sleep(50 * time.Millisecond)
		}
		callTimesOut(t, context.Background(), c, time.Second)
		c.begin(context.Background(), time.Now(), time.Second)
		select {
		case <-c.Done():
			t.Error("a call after one that timed out began with Done closed")
		default:
		}
		if c.Err() != nil {
			t.Errorf("Err = %v at the start of a call, want nil", c.Err())
		}
		c.end()
	})
}
