package quota

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/headroom-go/headroom/limit"
)

// Guard keeps the published quota of each key and turns attempts away while
// a key's remaining allowance is inside the reserve and its reset is ahead,
// or while the key is blocked by a Retry-After or a backoff. It is safe for
// concurrent use.
//
// The core methods take the time as an argument (Admit, Check, Observe,
// State); the shell methods read time.Now and block (Wait, AcquireWait,
// Enter, ObserveResponse). Times are kept as Unix nanoseconds, so now must
// lie between the years 1678 and 2262. Keys have state only once a response has
// published something about them or a slot is taken for them: a key the
// guard knows nothing about is always admitted.
type Guard struct {
	c         config
	m         sync.Map // string → *entry
	lastSweep atomic.Int64
}

// New returns a Guard, or Validate's error.
func New(o Options) (*Guard, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	return &Guard{c: o.config()}, nil
}

// Name is the name the guard gives its refusals.
func (g *Guard) Name() string { return g.c.name }

// Key is the key of a request under Options.Key (the host by default).
func (g *Guard) Key(r *http.Request) string { return g.c.key(r) }

// lookup returns the state a key reads: its own, or the one it shares.
func (g *Guard) lookup(key string) *entry {
	v, ok := g.m.Load(key)
	if !ok {
		return nil
	}
	e := v.(*entry)
	if s := e.shared.Load(); s != nil {
		return s
	}
	return e
}

// own returns the key's own entry, creating it.
func (g *Guard) own(key string) *entry {
	if v, ok := g.m.Load(key); ok {
		return v.(*entry)
	}
	e := &entry{}
	if g.c.maxInFlight > 0 {
		e.sem = make(chan struct{}, g.c.maxInFlight)
	}
	v, _ := g.m.LoadOrStore(key, e)
	return v.(*entry)
}

// Admit decides an attempt for key at now. It returns 0 when the attempt
// may go, and counts it against the key's remaining allowance; otherwise how
// long until it may, within (0, MaxRetryAfter]. It does not allocate. It is
// AdmitN with a cost of 1.
func (g *Guard) Admit(key string, now time.Time) time.Duration {
	return g.AdmitN(key, now, 1)
}

// AdmitN decides an attempt of cost units for key at now, for servers whose
// published figures count units rather than requests (SharePoint's resource
// units, tokens). The attempt goes when the remaining allowance less cost
// stays at or above the reserve; it then takes cost units off the key's
// remaining. An attempt that could never fit (cost above the limit less the
// reserve) goes once the remaining is above the reserve at all. After a
// reset only one probe goes, whatever its cost (state.go). A cost below 1
// counts as 1: every attempt is one to the server. It returns 0 or the wait,
// as Admit does, and does not allocate.
func (g *Guard) AdmitN(key string, now time.Time, cost int64) time.Duration {
	d, _ := g.admit(key, now, cost, false)
	return d
}

// admit is AdmitN; with wake set it also returns, when the attempt must
// wait, a channel closed when a response changes what the key admits.
func (g *Guard) admit(key string, now time.Time, cost int64, wake bool) (time.Duration, <-chan struct{}) {
	n := now.UnixNano()
	e := g.lookup(key)
	if e == nil {
		// The first attempt to a key: it goes alone (see entry.admit).
		e = g.own(key)
		e.touched.CompareAndSwap(0, n)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cost = max(cost, 1)
	d := e.admit(n, cost, &g.c)
	if d == 0 {
		e.record(n, cost)
	}
	if d == 0 || !wake {
		return d, nil
	}
	if e.wake == nil {
		e.wake = make(chan struct{})
	}
	return d, e.wake
}

// Check is Admit as an error: nil when the attempt may go, or a
// *limit.RateLimitedError with Reason limit.ReasonNoPermit and RetryAfter
// until the key is free (the reset, the end of a Retry-After or backoff).
func (g *Guard) Check(key string, now time.Time) error {
	return g.CheckN(key, now, 1)
}

// CheckN is AdmitN as an error, as Check is Admit.
func (g *Guard) CheckN(key string, now time.Time, cost int64) error {
	if d := g.AdmitN(key, now, cost); d > 0 {
		return g.refuse(d, limit.ReasonNoPermit)
	}
	return nil
}

func (g *Guard) refuse(d time.Duration, reason string) error {
	return &limit.RateLimitedError{Limiter: g.c.name, RetryAfter: d, Reason: reason}
}

// waitEnded is the error of a caller whose context ended its wait: for a
// deadline a refusal of the guard's (ReasonDeadline) that still matches
// context.DeadlineExceeded, as the limiters' waits end, so that a retry
// runner reads it as a self-imposed throttle; for a cancellation ctx.Err().
func (g *Guard) waitEnded(ctx context.Context) error {
	err := ctx.Err()
	if !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return &limit.RateLimitedError{Limiter: g.c.name, Reason: limit.ReasonDeadline}
}

// Wait holds the caller until key admits an attempt, and takes it. If the
// context ends first it returns ctx.Err(), or for a deadline a
// *limit.RateLimitedError (ReasonDeadline) matching it; a *limit.RateLimitedError
// at once, without waiting, when the wait would outlast the context's
// deadline (ReasonDeadline) or MaxWait (ReasonMaxWait).
func (g *Guard) Wait(ctx context.Context, key string) error {
	return g.WaitN(ctx, key, 1)
}

// WaitN is Wait for an attempt of cost units (AdmitN). A caller held for a
// probe's answer goes as soon as a response changes what the key admits,
// not when the wait named first has passed.
func (g *Guard) WaitN(ctx context.Context, key string, cost int64) error {
	_, err := g.waitN(ctx, key, cost)
	return err
}

// waitN is WaitN; it returns when the attempt was admitted.
func (g *Guard) waitN(ctx context.Context, key string, cost int64) (time.Time, error) {
	for {
		if ctx.Err() != nil {
			return time.Time{}, g.waitEnded(ctx)
		}
		now := time.Now()
		d, wake := g.admit(key, now, cost, true)
		if d == 0 {
			return now, nil
		}
		if d > g.c.maxWait {
			return time.Time{}, g.refuse(d, limit.ReasonMaxWait)
		}
		if dl, ok := ctx.Deadline(); ok && now.Add(d).After(dl) {
			return time.Time{}, g.refuse(d, limit.ReasonDeadline)
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return time.Time{}, g.waitEnded(ctx)
		case <-wake:
			t.Stop()
		case <-t.C:
		}
	}
}

// A Response is what Observe reads of the answer to one attempt.
type Response struct {
	// Status is the response's status code.
	Status int
	// Header holds its headers: the quota, the Retry-After.
	Header http.Header
	// Sent is when the attempt went out (when the guard admitted it: see
	// Slot.Sent); the zero time when unknown. It tells which answers belong
	// together: the throttles of attempts in flight at once are one signal,
	// and an answer to an attempt sent before a probe is not the probe's.
	Sent time.Time
	// Paced says a rate limiter that learns from throttles paces the
	// attempt's key (an adaptive rate limiter): a throttle without a hint
	// is its to answer by slowing down, and the guard does not back the
	// key off on top.
	Paced bool
}

// Observe takes what a response for key published: its quota headers, its
// Retry-After, its status. now is when it was read.
//
//   - The bucket binding under the reserve (see ParseAll and pick) updates
//     the key's remaining, limit and reset.
//   - A Retry-After, on any status, blocks the key until now + Retry-After
//     (capped), and replaces a later reset: Retry-After wins over reset
//     (draft-ietf-httpapi-ratelimit-headers).
//   - A 429 or 503 with no Retry-After, whose quota does not already
//     explain it (remaining inside the reserve and a reset ahead), blocks
//     the key for its next backoff interval, unless it belongs to the
//     burst that blocked the key last: the throttles of attempts that were
//     in flight together are one signal, one step of the curve. An attempt
//     belongs to that burst when it was sent before the step was taken (or,
//     with Sent unknown, when the key is still blocked). GitHub's secondary
//     limits are such throttles: they come with quota headers that show
//     allowance left. A throttle of a Paced attempt is left to its pacer,
//     which slows down, unless throttles have gone on, with no success,
//     for attempts sent more than pacingGrace after the first of them: the
//     server then refuses at any pace (a fixed window spent, with nothing
//     published), and the key backs off until it accepts again.
//   - A 2xx or 3xx resets the backoff.
//   - A 2xx that publishes nothing, for a key whose held reset has passed
//     (or that is probing after it), forgets the published remaining and
//     reset: the server has fallen silent below its publishing threshold
//     (SharePoint publishes from 80% of the quota); see state.go.
//
// Responses that publish nothing and throttle nothing leave no other state.
func (g *Guard) Observe(key string, r Response, now time.Time) {
	status, h := r.Status, r.Header
	var sent int64
	if !r.Sent.IsZero() {
		sent = r.Sent.UnixNano()
	}
	var buf [maxQuotas]Quota
	qs := ParseAll(h, now, buf[:0])
	ra, hasRA := parseRetryAfter(h, now, g.c.maxRetryAfter)
	throttled := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
	success := status >= 200 && status < 400
	informative := len(qs) > 0 || hasRA || throttled
	n := now.UnixNano()
	if !informative {
		v, ok := g.m.Load(key)
		if !ok {
			return // nothing to reset
		}
		v.(*entry).contact()
		if !success {
			return
		}
	}
	e := g.own(key)
	if informative {
		e.touched.Store(n)
		e.contact()
	}
	var q *Quota
	if len(qs) > 0 {
		q = &qs[pick(qs, g.c.reserve)]
		if g.c.share != nil && q.Key != "" {
			if sk := g.c.share(key, q.Key); sk != "" && sk != key {
				s := g.own(sk)
				e.shared.Store(s)
			}
		}
	}
	if s := e.shared.Load(); s != nil {
		e = s
		if informative {
			e.touched.Store(n)
			e.contact()
		}
	}

	e.mu.Lock()
	out := e.outSince(sent)
	if !informative && status < 300 && e.known && (e.probing || e.reset != 0 && e.reset <= n) {
		e.forget()
	}
	if q != nil {
		e.update(q, n, sent, out, success)
	}
	if hasRA {
		until := n + int64(ra)
		e.blocked = max(e.blocked, until)
		switch {
		case !e.known:
		case e.reset == 0 || e.assumed:
			// No published reset: after the wait, one probe (see admit).
			e.reset, e.assumed = until, true
		case e.reset > until:
			e.reset = until
		}
		if throttled && e.gradual {
			// A throttle's wait is the server saying it has no room until
			// then: a gradual key refills from its end.
			e.remaining, e.fillAt = min(e.remaining, 0), max(e.fillAt, until)
		}
	}
	switch {
	case throttled && !hasRA && !(e.known && e.reset > n && e.remaining <= g.c.reserve.of(e.limit)):
		if r.Paced && !e.pacingFailed(sent, n) {
			break // the pacer slows down; the guard waits to see it fail
		}
		// Attempts in flight together are throttled together: one
		// signal, not a step of the curve each.
		if sameBurst := sent != 0 && sent < e.boStep || sent == 0 && e.blocked > n; !sameBurst {
			e.blocked = max(e.blocked, n+int64(e.nextBackoff(&g.c)))
			e.boStep = n
		}
	case success:
		e.throttledSince = 0
		if e.bo != nil {
			e.bo.Reset()
		}
	}
	e.changed()
	e.mu.Unlock()
	g.sweep(n)
}

// ObserveResponse is Observe at time.Now for the *http.Response to an
// attempt sent at sent (Slot.Sent; the zero time when unknown).
func (g *Guard) ObserveResponse(key string, sent time.Time, resp *http.Response) {
	g.Observe(key, Response{Status: resp.StatusCode, Header: resp.Header, Sent: sent}, time.Now())
}

// RetryAfter is ParseRetryAfter capped by the guard's MaxRetryAfter.
func (g *Guard) RetryAfter(h http.Header, now time.Time) (time.Duration, bool) {
	return parseRetryAfter(h, now, g.c.maxRetryAfter)
}

// State returns a snapshot of key at now, false when the guard holds nothing
// for it.
func (g *Guard) State(key string, now time.Time) (State, bool) {
	e := g.lookup(key)
	if e == nil {
		return State{}, false
	}
	own := g.own(key)
	n := now.UnixNano()
	e.mu.Lock()
	defer e.mu.Unlock()
	s := State{
		Known:     e.known && n-e.touched.Load() <= int64(g.c.ttl),
		Remaining: e.remaining,
		Limit:     e.limit,
		Reset:     unixTime(e.reset),
		Updated:   unixTime(e.touched.Load()),
		InFlight:  len(own.sem),
		Window:    time.Duration(cmp.Or(e.window, e.learned)),
		Probing:   e.probing,
	}
	if e.blocked > n {
		s.BlockedUntil = unixTime(e.blocked)
	}
	return s, true
}

// sweep drops the entries idle for longer than the TTL, at most once a TTL.
func (g *Guard) sweep(n int64) {
	last := g.lastSweep.Load()
	if last == 0 {
		g.lastSweep.CompareAndSwap(0, n)
		return
	}
	if n-last < int64(g.c.ttl) || !g.lastSweep.CompareAndSwap(last, n) {
		return
	}
	g.m.Range(func(k, v any) bool {
		e := v.(*entry)
		if n-e.touched.Load() <= int64(g.c.ttl) || len(e.sem) > 0 {
			return true
		}
		e.mu.Lock()
		idle := e.blocked <= n
		e.mu.Unlock()
		if idle {
			g.m.CompareAndDelete(k, e)
		}
		return true
	})
}

// A Slot is one request in flight for a key, taken by Acquire, AcquireWait
// or Enter. Release it once, when the response has been received or the
// attempt has failed. The zero Slot is valid and releases
// nothing.
type Slot struct {
	e    *entry
	sent time.Time
}

// Sent is when Enter admitted the attempt, for Response.Sent; the zero time
// for a slot Acquire or AcquireWait took.
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

// Acquire takes an in-flight slot for key, or refuses with
// limit.ReasonNoPermit when MaxInFlight are out. Without a cap it returns
// the zero Slot at once.
func (g *Guard) Acquire(key string) (Slot, error) {
	if g.c.maxInFlight == 0 {
		return Slot{}, nil
	}
	if s, ok := g.own(key).tryTake(); ok {
		return s, nil
	}
	return Slot{}, g.refuse(0, limit.ReasonNoPermit)
}

// AcquireWait takes an in-flight slot for key, waiting in FIFO order for
// one to be released. If the context ends first it returns ctx.Err(), or
// for a deadline a *limit.RateLimitedError (ReasonDeadline) matching it.
func (g *Guard) AcquireWait(ctx context.Context, key string) (Slot, error) {
	if g.c.maxInFlight == 0 {
		return Slot{}, nil
	}
	e := g.own(key)
	// A free slot is taken even when the context has ended: the select
	// below would pick between the two at random.
	if s, ok := e.tryTake(); ok {
		return s, nil
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

// Enter is the pre-attempt step of an HTTP layer: it takes an in-flight
// slot (when MaxInFlight caps them), then admits the attempt against the
// key's quota — waiting for both when Options.Queue is set, refusing
// otherwise. On error no slot is held. The caller sends the request, calls
// ObserveResponse (or Observe) with what came back, and releases the slot:
//
//	key := g.Key(req)
//	slot, err := g.Enter(req.Context(), key)
//	if err != nil {
//		return nil, err // *limit.RateLimitedError, or ctx.Err()
//	}
//	defer slot.Release()
//	resp, err := next.RoundTrip(req)
//	if err == nil {
//		g.ObserveResponse(key, slot.Sent(), resp)
//	}
func (g *Guard) Enter(ctx context.Context, key string) (Slot, error) {
	return g.EnterN(ctx, key, 1)
}

// EnterN is Enter for an attempt of cost units (AdmitN, WaitN).
func (g *Guard) EnterN(ctx context.Context, key string, cost int64) (Slot, error) {
	var s Slot
	var err error
	if g.c.queue {
		if s, err = g.AcquireWait(ctx, key); err == nil {
			s.sent, err = g.waitN(ctx, key, cost)
		}
	} else {
		if s, err = g.Acquire(key); err == nil {
			s.sent = time.Now()
			err = g.CheckN(key, s.sent, cost)
		}
	}
	if err != nil {
		s.Release() // the zero Slot when none was taken
		return Slot{}, err
	}
	return s, nil
}
