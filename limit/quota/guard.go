package quota

import (
	"context"
	"net/http"
	"runtime"
	"sync/atomic"
	"time"
	"weak"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/limit"
	"github.com/headroom-go/headroom/telemetry"
)

// Guard keeps the published quota of each key and turns attempts away while
// a key's remaining allowance is inside the reserve and its reset is ahead,
// or while the key is blocked by a Retry-After or a backoff. It is safe for
// concurrent use.
//
// Taking a permit for an attempt is one verb in two forms: TryAcquireAt, the
// core, decides at the time it is given and returns at once, granting or
// saying how long until it could; Acquire, the shell, reads time.Now, takes
// an in-flight slot too, and waits up to the context's deadline (or refuses
// at once with Options.RefuseAtOnce). Observe and State take the time as
// an argument too. Times are kept as Unix nanoseconds, so now must lie
// between the years 1678 and 2262. Keys have state only once a response has
// published something about them or a slot is taken for them: a key the
// guard knows nothing about is always admitted. At most Options.MaxKeys
// keys have state at once, the least recently used going first.
type Guard struct {
	c         config
	keys      keys
	lastSweep atomic.Int64
	tel       *metrics.Guard
}

// New returns a Guard, or Validate's error.
func New(o Options) (*Guard, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	g := &Guard{c: o.config()}
	g.keys.max = g.c.maxKeys
	g.tel = metrics.NewGuard(o.MeterProvider, g.c.name, o.KeyAttributes, keyStates(weak.Make(g)))
	// The meter provider holds the gauges' callback until it is
	// unregistered: unregister it when the guard is dropped.
	runtime.AddCleanup(g, (*metrics.Guard).Close, g.tel)
	return g, nil
}

// Key is the key of a request under Options.Key (the host by default).
func (g *Guard) Key(r *http.Request) string { return g.c.key(r) }

// lookup returns the state a key reads: its own, or the one it shares.
func (g *Guard) lookup(key string) *entry {
	e, ok := g.keys.load(key)
	if !ok {
		return nil
	}
	if s := e.shared.Load(); s != nil {
		return s
	}
	return e
}

// own returns the key's own entry, creating it at n (Unix nanoseconds).
func (g *Guard) own(key string, n int64) *entry {
	if e, ok := g.keys.load(key); ok {
		return e
	}
	e := &entry{}
	if g.c.maxInFlight > 0 {
		e.sem = make(chan struct{}, g.c.maxInFlight)
	}
	return g.keys.store(key, e, n)
}

// TryAcquireAt decides an attempt of cost units for key at now, and returns
// at once: the time-explicit core, which takes the time and the cost as
// every engine's TryAcquire does. The attempt goes (ok) when the remaining allowance less cost
// stays at or above the reserve; it then takes cost units off the key's
// remaining. Otherwise retryAfter is how long until it may, within
// (0, MaxRetryAfter]: until the reset, the end of a Retry-After or backoff,
// or the refill of a gradual key. Costs count units for servers whose
// published figures count units rather than requests (SharePoint's resource
// units, tokens); a cost below 1 counts as 1: every attempt is one to the
// server. An attempt that could never fit (cost above the limit less the
// reserve) goes once the remaining is above the reserve at all. After a
// reset only one probe goes, whatever its cost (state.go). The in-flight
// cap (Options.MaxInFlight) is Acquire's: TryAcquireAt decides against the
// quota alone. It does not allocate.
func (g *Guard) TryAcquireAt(key string, now time.Time, cost int) (ok bool, retryAfter time.Duration) {
	d, _ := g.admit(key, now, int64(cost), 1, false)
	return d == 0, d
}

// admit is TryAcquireAt as the wait alone, 0 when the attempt goes, for an
// attempt of priority level (priority.go); with wake set it also returns,
// when the attempt must wait, a channel closed when a response changes
// what the key admits.
func (g *Guard) admit(key string, now time.Time, cost int64, level int, wake bool) (time.Duration, <-chan struct{}) {
	n := now.UnixNano()
	e := g.lookup(key)
	if e == nil {
		// The first attempt to a key: it goes alone (see entry.admit).
		e = g.own(key, n)
		e.touched.CompareAndSwap(0, n)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	cost = max(cost, 1)
	if g.c.levels.any() {
		e.ask(level, n, cost)
	}
	d := e.admitBehind(n, cost, level, &g.c)
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

func (g *Guard) refuse(d time.Duration, reason string) error {
	return &limit.RateLimitedError{Limiter: g.c.name, RetryAfter: d, Reason: reason}
}

// waitEnded is the error of a caller whose context has ended, as every
// limiter's (limit.ContextEnded).
func (g *Guard) waitEnded(ctx context.Context) error { return limit.ContextEnded(ctx, g.c.name) }

// waitN holds the caller until key admits an attempt of cost units, and
// takes it; it returns when the attempt was admitted. Callers held for a
// key go in order of priority: while one of a higher level is held, a
// lower one waits too (levelHold). A caller held for a
// probe's answer goes as soon as a response changes what the key admits,
// not when the wait named first has passed. If the context ends first it
// returns ctx.Err(), or for a deadline a *limit.RateLimitedError
// (ReasonDeadline) matching it; a *limit.RateLimitedError at once, without
// waiting, when the wait would outlast the context's deadline
// (ReasonDeadline) or MaxWait (ReasonMaxWait).
func (g *Guard) waitN(ctx context.Context, key string, cost int64, level int, q *queued) (time.Time, error) {
	h := levelHold{e: q.e, level: level, known: g.c.levels.any()}
	defer h.leave()
	for {
		if ctx.Err() != nil {
			return time.Time{}, g.waitEnded(ctx)
		}
		if !h.known && q.e.waiting.Load() > 0 {
			h.read(ctx) // others are held: its level is its place among them
		}
		now := time.Now()
		d, wake := g.admit(key, now, cost, h.level, true)
		if d == 0 {
			return now, nil
		}
		if !h.known {
			h.read(ctx) // about to wait: ask again at its own level
			continue
		}
		if d > g.c.maxWait {
			return time.Time{}, g.refuse(d, telemetry.ReasonMaxWait)
		}
		if dl, ok := ctx.Deadline(); ok && now.Add(d).After(dl) {
			return time.Time{}, g.refuse(d, telemetry.ReasonDeadline)
		}
		if err := q.join(d); err != nil {
			return time.Time{}, err
		}
		h.hold()
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
	// Cost is the units the attempt was admitted with (Acquire's cost);
	// 0 when unknown.
	Cost int
	// Paced says a rate limiter that learns from throttles paces the
	// attempt's key (an adaptive rate limiter): a throttle without a hint
	// is its to answer by slowing down, and the guard does not back the
	// key off on top.
	Paced bool
}

// Observe takes what a response for key published: its quota headers, its
// Retry-After, its status. now is when it was read.
//
//   - The bucket binding under the reserve (see pick) updates the key's
//     remaining, limit and reset.
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
//     which slows down, and stops and probes alone when the server refuses
//     at any pace (a fixed window spent, with nothing published).
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
	qs := parseAll(h, now, buf[:0])
	ra, hasRA := parseRetryAfter(h, now, g.c.maxRetryAfter)
	throttled := status == http.StatusTooManyRequests || status == http.StatusServiceUnavailable
	success := status >= 200 && status < 400
	informative := len(qs) > 0 || hasRA || throttled
	n := now.UnixNano()
	var q *Quota
	if len(qs) > 0 {
		q = &qs[pick(qs, g.c.reserve)]
	}
	e := g.entryFor(key, q, informative, success, n)
	if e == nil {
		return
	}

	e.mu.Lock()
	out, adm := e.outSince(sent)
	e.answeredSubSecond(sent, n, !informative && success)
	if r.Cost > 0 {
		adm.cost = int64(r.Cost)
	}
	if sent != 0 {
		e.answeredUnits += adm.cost
		if adm.upTo == 0 {
			// Admitted before the admissions kept, after a burst: every
			// unit still out may be on its way to the server.
			out = max(out, e.units-e.answeredUnits)
		}
	}
	if throttled {
		e.refused += adm.cost
		if e.gradual && sent > e.cutAt {
			// The count had room for it: the server gives back less
			// than the key was thought to. Once for the attempts in
			// flight together.
			e.rate.misfit()
			e.cutAt = n
			e.strictSubSecond()
		}
	}
	if !informative && success {
		e.quiet = true // it publishes only some of the time (near its limit)
	}
	if !informative && status < 300 && e.known && (e.probing || e.reset != 0 && e.reset <= n) {
		e.forget()
		e.silentCapped = e.maxRemaining > 0
		e.silentRoom = 0
	}
	if !informative && success && !e.known && e.silentCapped {
		e.silence(n, out)
	}
	if q != nil {
		e.update(q, n, sent, out, adm, success)
	}
	if hasRA {
		e.retryAfter(n+int64(ra), throttled)
	}
	switch {
	case throttled && !hasRA && !(e.known && e.reset > n && e.remaining <= e.reserveOf(&g.c)):
		if r.Paced {
			// The pacer answers it: it slows down, and when the server
			// refuses at any pace (a window spent) it stops and probes
			// alone. A backoff here would hold its probes.
			break
		}
		// Attempts in flight together are throttled together: one
		// signal, not a step of the curve each.
		if sameBurst := sent != 0 && sent < e.boStep || sent == 0 && e.blocked > n; !sameBurst {
			e.blocked = max(e.blocked, n+int64(e.nextBackoff(&g.c)))
			e.boStep = n
		}
	case success:
		if e.bo != nil {
			e.bo.Reset()
		}
	}
	e.changed()
	e.mu.Unlock()
	g.sweep(n)
}

// entryFor is the entry a response for key updates: key's own, or the one
// it shares through Options.ShareKey once q names a shared bucket. It is nil
// when the response teaches nothing and the guard holds nothing for key.
// An entry a response informs is marked touched and contacted at n.
func (g *Guard) entryFor(key string, q *Quota, informative, success bool, n int64) *entry {
	if !informative {
		e, ok := g.keys.load(key)
		if !ok {
			return nil // nothing to reset
		}
		e.contact()
		if !success {
			return nil
		}
	}
	e := g.own(key, n)
	if informative {
		e.touched.Store(n)
		e.contact()
	}
	if q != nil && g.c.share != nil && q.Key != "" {
		if sk := g.c.share(key, q.Key); sk != "" && sk != key {
			e.shared.Store(g.own(sk, n))
		}
	}
	if s := e.shared.Load(); s != nil {
		e = s
		if informative {
			e.touched.Store(n)
			e.contact()
		}
	}
	return e
}

// retryAfter blocks e until until, a Retry-After's end, which replaces a
// later reset: Retry-After wins over reset. It is called with e.mu held.
func (e *entry) retryAfter(until int64, throttled bool) {
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

// State returns a snapshot of key at now, false when the guard holds nothing
// for it.
func (g *Guard) State(key string, now time.Time) (State, bool) {
	own, ok := g.keys.peek(key) // a reading is no use of the key
	if !ok {
		return State{}, false
	}
	e := own
	if s := own.shared.Load(); s != nil {
		e = s
	}
	n := now.UnixNano()
	e.mu.Lock()
	defer e.mu.Unlock()
	s := State{
		Known:     e.known && n-e.touched.Load() <= int64(g.c.ttl) && !e.roomless(),
		Remaining: e.remaining,
		Limit:     e.limit,
		Reset:     unixTime(e.reset),
		Updated:   unixTime(e.touched.Load()),
		InFlight:  len(own.sem),
		Window:    e.windowOfLimit(n),
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
	g.keys.each(func(key string, e *entry) bool {
		if n-e.touched.Load() > int64(g.c.ttl) && e.mayGo(n) {
			g.keys.delete(key, e)
		}
		return true
	})
}

// Acquire is the pre-attempt step of an HTTP layer, on real time: it takes
// an in-flight slot for key (when Options.MaxInFlight caps them), then
// admits an attempt of cost units against the key's quota, as TryAcquireAt
// does at time.Now — waiting in FIFO order for the slot and then for the
// quota, up to the context's deadline and MaxWait, unless
// Options.QueueLimit refuses at once instead: with 0 every attempt that
// would wait, and once the key holds QueueLimit units the next
// (ReasonQueueFull). A refusal is a *limit.RateLimitedError:
// ReasonNoPermit with RetryAfter until the key is free (or 0 for a slot:
// when one is released is not the guard's to know);
// ReasonDeadline or ReasonMaxWait, at once, when the wait would outlast the
// context's deadline or MaxWait; ReasonDeadline, matching
// context.DeadlineExceeded, when the deadline ends a wait. A cancelled
// context ends a wait with ctx.Err(). A context that has ended before the
// call takes nothing, even when the key has room: ctx.Err() or
// ReasonDeadline, as every limiter's (limit.ContextEnded). On error no slot
// is held. The caller
// sends the request, calls Observe with what came back, and releases the
// slot:
//
//	key := g.Key(req)
//	slot, err := g.Acquire(req.Context(), key, 1)
//	if err != nil {
//		return nil, err // *limit.RateLimitedError, or ctx.Err()
//	}
//	defer slot.Release()
//	resp, err := next.RoundTrip(req)
//	if err == nil {
//		g.Observe(key, quota.Response{Status: resp.StatusCode, Header: resp.Header, Sent: slot.Sent(), Cost: 1}, time.Now())
//	}
func (g *Guard) Acquire(ctx context.Context, key string, cost int) (Slot, error) {
	if ctx.Err() != nil {
		return Slot{}, g.waitEnded(ctx)
	}
	var s Slot
	var err error
	slotted := false
	level := 1 // the priority is read only when Reserves keeps something back
	if g.c.levels.any() {
		level = levelOf(limit.PriorityFrom(ctx))
	}
	if g.c.queueLimit != 0 {
		q := queued{g: g, e: g.own(key, time.Now().UnixNano()), cost: int64(max(cost, 1))}
		if s, err = g.waitSlot(ctx, key, &q); err == nil {
			slotted = true
			s.sent, err = g.waitN(ctx, key, int64(cost), level, &q)
		}
		q.leave()
	} else if s, err = g.takeSlot(key); err == nil {
		slotted = true
		s.sent = time.Now()
		if d, _ := g.admit(key, s.sent, int64(cost), level, false); d != 0 {
			err = g.refuse(d, telemetry.ReasonNoPermit)
		}
	}
	if err != nil {
		g.refused(ctx, key, slotted, err)
		s.Release() // the zero Slot when none was taken
		return Slot{}, err
	}
	return s, nil
}

// queued is one Acquire's place among the units held for a key
// (Options.QueueLimit): it joins when it first has to wait, and leaves
// when Acquire returns.
type queued struct {
	g      *Guard
	e      *entry
	cost   int64
	joined bool
}

// join counts the attempt's units as held, unless the key holds
// QueueLimit units already; then it refuses with ReasonQueueFull and
// retryAfter d.
func (q *queued) join(d time.Duration) error {
	if q.joined {
		return nil
	}
	if n := q.e.waiting.Add(q.cost); q.g.c.queueLimit > 0 && n > q.g.c.queueLimit {
		q.e.waiting.Add(-q.cost)
		return q.g.refuse(d, telemetry.ReasonQueueFull)
	}
	q.joined = true
	return nil
}

// leave gives back the units join counted.
func (q *queued) leave() {
	if q.joined {
		q.e.waiting.Add(-q.cost)
		q.joined = false
	}
}
