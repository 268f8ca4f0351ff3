package limit

import (
	"context"
	"sync"
	"time"

	"github.com/headroom-go/headroom/internal/metrics"
	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit/window"
	"github.com/headroom-go/headroom/telemetry"
)

// PerSecond returns a token bucket that grants permits a second and holds
// burst permits: at most burst go at once, and at most burst−1+permits in
// any second. The bucket starts full. A burst of 1 is the smooth limit a
// reader of "100 a second" expects: PerSecond(100, 1) lets no more than 100
// through in any second; PerSecond(100, 100) lets 100 go at once and up to
// 199 in the first second. A burst of 0 means 1.
func PerSecond(permits float64, burst int, opts ...Option) (Limiter, error) {
	if permits == 0 {
		// 0 would read as "no shape"; say what is wrong with it instead.
		l := problems.New("limit")
		l.Add("PermitsPerSecond", 0.0, "a rate above 0")
		return nil, l.Err()
	}
	return build(Options{PermitsPerSecond: permits, Burst: burst}, opts)
}

// perSecond is the PerSecond shape: a window.TokenBucket behind a clock, a
// FIFO queue of waiters and telemetry.
//
// The fast path — permits free, nobody waiting — is one monotonic clock
// read and one CAS in the bucket; it takes no lock. The queue's lock is taken
// only by callers that must wait, by their cancellations, and by nothing
// else. The bucket itself keeps the fast path from overtaking the queue (see
// window.TokenBucket.Reserve).
//
// A limiter measures time from its own epoch with time.Since, which reads
// only the monotonic clock and is faked inside testing/synctest bubbles; build
// the limiter in the bubble that uses it.
type perSecond struct {
	shell
	epoch time.Time

	mu sync.Mutex
	// queue holds the pending waiters in booking (and so readyAt) order.
	// A waiter's readyAt is when its reservation is due; it outlives the
	// waiter's place in the queue until its goroutine has read it.
	queue waitQueue

	bucket *window.TokenBucket // its own allocation, hot word padded
}

// newPerSecond builds the PerSecond shape of a validated o.
func newPerSecond(o Options) (*perSecond, error) {
	bucket, err := window.NewTokenBucket(o.PermitsPerSecond, o.perSecondBurst())
	if err != nil {
		return nil, err
	}
	l := &perSecond{epoch: time.Now(), queue: waitQueue{limit: o.queueLimit()}, bucket: bucket}
	l.dress(o, metrics.KindPerSecond, l)
	// The bucket counts the permits of its grants in the word its
	// compare-and-swap writes anyway, so a grant on the fast path costs no
	// atomic add of the recorder's; the grants of waiters, which the
	// bucket books but does not count, are counted with AcquiredN.
	l.metrics.CountGrants(bucket.Granted)
	l.metrics.SetLimit(o.PermitsPerSecond * 60) // permits per minute
	sample(l.metrics, l, (*perSecond).figures)
	return l, nil
}

// perSecondBurst is the bucket's burst: Burst, or 1 for 0.
func (o *Options) perSecondBurst() int { return max(o.Burst, 1) }

// figures reports the bucket: permits spent within the burst, and left.
func (l *perSecond) figures(f metrics.Figures) {
	used(f, float64(l.bucket.Burst()), float64(l.bucket.Available(time.Since(l.epoch))))
}

// Acquire asks for one permit; see AcquireN. It repeats AcquireN's fast
// path rather than calling it: a Lease is returned through memory, and one
// copy fewer is worth a few nanoseconds here.
func (l *perSecond) Acquire(ctx context.Context) (Lease, error) {
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, 1)
	}
	now := time.Since(l.epoch)
	ok, retryAfter := l.bucket.TryAcquire(now, 1)
	if ok {
		return spentLease(&l.spent, now, 1), nil
	}
	return l.refused(ctx, now, 1, retryAfter)
}

// AcquireN grants cost permits at once when they are free and nobody is
// waiting; a call whose context has ended takes nothing (ContextEnded). The
// lease's Granted is when its
// permits became usable — the time of the call, or for a caller that waited
// the time its reservation fell due (its goroutine resumes a little later).
// Its permits were spent when granted: Release frees nothing and teaches
// the bucket nothing, but the lease is held (Held) until released, as every
// shape's is. A cost of 0 is granted and takes nothing. A cost below 0 or above the burst is refused with a *CostError.
// Otherwise, with QueueLimit 0 it refuses at once with telemetry.ReasonNoPermit and a
// RetryAfter that is the caller's turn: callers refused together are told
// to come back one after another, each when its permits would be due had it
// been queued behind those refused before it (window.TokenBucket.NextTurn),
// so that they are served in the order they were refused rather than
// meeting again at one instant. A lone refusal's RetryAfter is exact: the
// same call then succeeds if nobody else takes permits in between. With a
// queue it waits its turn; see wait.
func (l *perSecond) AcquireN(ctx context.Context, cost int) (Lease, error) {
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	now := time.Since(l.epoch)
	ok, retryAfter := l.bucket.TryAcquire(now, cost)
	if ok {
		if cost == 0 {
			l.metrics.AcquiredN(cost) // a lease the bucket does not see
		} else {
			l.metrics.CountedMore(cost)
		}
		return spentLease(&l.spent, now, cost), nil
	}
	return l.refused(ctx, now, cost, retryAfter)
}

// refused is AcquireN after TryAcquire(now, cost) refused with retryAfter.
func (l *perSecond) refused(ctx context.Context, now time.Duration, cost int, retryAfter time.Duration) (Lease, error) {
	if cost == 0 {
		l.metrics.AcquiredN(cost)
		return Lease{granted: now}, nil
	}
	if cost < 0 || cost > l.bucket.Burst() {
		return Lease{}, &CostError{Limiter: l.name, Cost: cost, Capacity: l.bucket.Burst()}
	}
	if l.queue.limit == 0 {
		return Lease{}, l.refuse(cost, telemetry.ReasonNoPermit, max(retryAfter, l.bucket.NextTurn(now, cost)))
	}
	return l.wait(ctx, now, cost)
}

func (l *perSecond) refuse(cost int, reason string, retryAfter time.Duration) error {
	l.metrics.DeniedN(reason, cost)
	return &RateLimitedError{Limiter: l.name, RetryAfter: retryAfter, Reason: reason}
}

// wait books cost permits and sleeps until they are due, in the queue's
// order (of priority, FIFO within a level) with every other waiter. It refuses at once, without booking, when the queue
// has no room for cost more permits (telemetry.ReasonQueueFull) or when ctx's deadline
// comes before the permits would be due (telemetry.ReasonDeadline); either way
// RetryAfter is when the permits would have been due. If ctx ends while the
// caller waits, the permits go back to the bucket, every later waiter moves
// up by their worth, and wait returns waitEnded's error. A waiter whose permits are
// due when it looks takes them, even if ctx has just ended: their time has
// passed, so giving them back would give nothing.
func (l *perSecond) wait(ctx context.Context, arrived time.Duration, cost int) (Lease, error) {
	if ctx.Err() != nil {
		return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
	}
	p, err := priorityOf(ctx)
	if err != nil {
		return Lease{}, err
	}
	l.mu.Lock()
	// Read the clock under the lock, so that the bookings that wait see
	// times in the order they book.
	now := time.Since(l.epoch)
	l.dropDue(now)
	if !l.queue.shed(cost, p.level(), func(w *waiter) { l.giveBack(w, now); l.metrics.QueueAdd(-int64(w.cost)) }) {
		// Only a grant at once will do.
		readyAt, ok := l.bucket.Reserve(now, cost, 0)
		l.mu.Unlock()
		if ok {
			l.metrics.AcquiredN(cost)
			return spentLease(&l.spent, now, cost), nil
		}
		return Lease{}, l.refuse(cost, telemetry.ReasonQueueFull, readyAt-now)
	}
	maxAhead := window.Never
	if d, ok := ctx.Deadline(); ok {
		maxAhead = d.Sub(l.epoch) - now
	}
	w := l.queue.push(cost, p.level())
	readyAt, ok := l.book(w, now, maxAhead)
	switch {
	case ok && readyAt <= now:
		l.queue.served(w)
		l.mu.Unlock()
		l.queue.put(w)
		l.metrics.AcquiredN(cost)
		return spentLease(&l.spent, now, cost), nil
	case !ok:
		l.queue.remove(w)
		l.mu.Unlock()
		l.queue.put(w)
		return Lease{}, l.refuse(cost, telemetry.ReasonDeadline, readyAt-now)
	}
	w.readyAt = readyAt
	l.mu.Unlock()
	l.metrics.QueueAdd(int64(cost))

	for d := readyAt - now; ; {
		woke := w.sleep(ctx, d)
		l.mu.Lock()
		if w.shed {
			l.mu.Unlock()
			l.queue.put(w)
			return Lease{}, shedError(l.name, l.metrics, cost)
		}
		now = time.Since(l.epoch)
		readyAt := w.readyAt
		if readyAt <= now {
			// Due (dropDue may have taken it out of the queue already).
			l.unlink(w, true)
			l.mu.Unlock()
			l.queue.put(w)
			l.metrics.Waited(ctx, now-arrived)
			l.metrics.AcquiredN(cost)
			return spentLease(&l.spent, readyAt, cost), nil
		}
		if woke == wokenDone || ctx.Err() != nil {
			l.giveBack(w, now)
			l.unlink(w, false)
			l.mu.Unlock()
			l.queue.put(w)
			return Lease{}, waitEnded(ctx, l.name, l.metrics, cost)
		}
		// Woken by a shift, or (a timer is never early on the monotonic
		// clock, but reading it is not free of skew) a hair early.
		d = max(readyAt-now, 1)
		l.mu.Unlock()
	}
}

// dropDue takes out of the queue the waiters whose permits are due by now,
// so that they no longer count against QueueLimit; their goroutines will
// find themselves due and take their lease. l.mu must be held.
func (l *perSecond) dropDue(now time.Duration) {
	for w := l.queue.front(); w != nil && w.readyAt <= now; w = l.queue.front() {
		l.unlink(w, true)
	}
}

// giveBack returns the permits booked for w, still queued at now and not
// due, to the bucket: every later waiter moves up by their worth. l.mu
// must be held.
func (l *perSecond) giveBack(w *waiter, now time.Duration) {
	if shift, ok := l.bucket.Cancel(now, w.readyAt, w.cost); ok {
		for later := w.next; later != nil; later = later.next {
			later.readyAt -= shift
			l.queue.wake(later) // to sleep again, for less
		}
	}
}

// book reserves w's permits, w just queued at its place, and returns when
// they are due, if that is at most maxAhead after now. Bookings are
// contiguous in queue order, each waiter's permits falling due cost
// intervals after those of the waiter ahead of it, so a waiter that passed
// others takes the start of the first one's booking, and they all move
// back by its worth. A waiter at the back books at the bucket's end, as
// any caller would. Nothing is booked when ok is false. l.mu must be held.
func (l *perSecond) book(w *waiter, now, maxAhead time.Duration) (readyAt time.Duration, ok bool) {
	b := w.next
	if b == nil {
		return l.bucket.Reserve(now, w.cost, maxAhead)
	}
	interval := l.bucket.Interval()
	worth := time.Duration(w.cost) * interval
	readyAt = max(b.readyAt-time.Duration(b.cost)*interval+worth, now)
	if readyAt-now > maxAhead {
		return readyAt, false
	}
	if _, ok := l.bucket.Reserve(now, w.cost, window.Never); !ok {
		return readyAt, false
	}
	for ; b != nil; b = b.next {
		b.readyAt += worth // each wakes early once, and sleeps again
	}
	return readyAt, true
}

// unlink takes w out of the queue, if it is still there, served (due) or
// not, keeping its readyAt for its goroutine. l.mu must be held.
func (l *perSecond) unlink(w *waiter, served bool) {
	if w.linked {
		l.queue.leave(w, served)
		l.metrics.QueueAdd(-int64(w.cost))
	}
}
