package resilience

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/headroom-go/headroom"
)

// A held attempt context outlives fn until released: an HTTP body can be
// read after the runner returns.
func TestHoldAttemptContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, err := bare(Options{AttemptTimeout: headroom.Duration(time.Minute)})
		if err != nil {
			t.Fatal(err)
		}
		var held context.Context
		release, err := Run(context.Background(), p, func(ctx context.Context) (func(), error) {
			held = ctx
			return HoldAttemptContext(ctx), nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if err := held.Err(); err != nil {
			t.Fatalf("held context ended when fn returned: %v", err)
		}
		release()
		if err := held.Err(); err != context.Canceled {
			t.Fatalf("released context: Err() = %v, want context.Canceled", err)
		}
		release() // a second release does nothing
	})
}

// Without a hold the attempt's context ends when fn returns.
func TestAttemptContextEndsWithoutHold(t *testing.T) {
	p, err := bare(Options{AttemptTimeout: headroom.Duration(time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	held, err := Run(context.Background(), p, func(ctx context.Context) (context.Context, error) {
		return ctx, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if held.Err() == nil {
		t.Fatal("attempt context still alive after fn returned")
	}
}
