package quota

import (
	"context"
	"time"

	"github.com/headroom-go/headroom/telemetry"
)

// A Slot is one request in flight for a key, taken by Acquire. Release it
// once, when the response has been received or the attempt has failed. The
// zero Slot is valid and releases nothing.
type Slot struct {
	e    *entry
	sent time.Time
}

// Sent is when Acquire admitted the attempt, for Response.Sent.
func (s Slot) Sent() time.Time { return s.sent }

// Release gives the slot back; it never blocks. Releasing it again, or
// releasing the zero Slot, does nothing. Like a limit.Lease, a copy is the
// same slot: release one of them.
func (s *Slot) Release() {
	e := s.e
	if e == nil || e.sem == nil {
		return
	}
	s.e, s.sent = nil, time.Time{}
	select {
	case <-e.sem:
	default:
	}
}

// takeSlot takes an in-flight slot for key, or refuses with
// telemetry.ReasonNoPermit when MaxInFlight are out. Without a cap it returns
// the zero Slot at once.
func (g *Guard) takeSlot(key string) (Slot, error) {
	if g.c.maxInFlight == 0 {
		return Slot{}, nil
	}
	if s, ok := g.own(key, time.Now().UnixNano()).tryTake(); ok {
		return s, nil
	}
	return Slot{}, g.refuse(0, telemetry.ReasonNoPermit)
}

// waitSlot takes an in-flight slot for key, waiting in FIFO order for one
// to be released, held as q (Options.QueueLimit). If the context ends first
// it returns ctx.Err(), or for a deadline a *limit.RateLimitedError
// (ReasonDeadline) matching it.
func (g *Guard) waitSlot(ctx context.Context, key string, q *queued) (Slot, error) {
	if g.c.maxInFlight == 0 {
		return Slot{}, nil
	}
	e := g.own(key, time.Now().UnixNano())
	// A free slot is taken at once: the select below would pick at random
	// between it and a context that ends meanwhile.
	if s, ok := e.tryTake(); ok {
		return s, nil
	}
	if err := q.join(0); err != nil {
		return Slot{}, err
	}
	select {
	case e.sem <- struct{}{}:
		return Slot{e: e}, nil
	case <-ctx.Done():
		return Slot{}, g.waitEnded(ctx)
	}
}

// tryTake takes a free in-flight slot of e without waiting. e.sem is set.
func (e *entry) tryTake() (Slot, bool) {
	select {
	case e.sem <- struct{}{}:
		return Slot{e: e}, true
	default:
		return Slot{}, false
	}
}
