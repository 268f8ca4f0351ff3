package adaptive

import (
	"math"
	"time"
)

// reserveLend is how long after a request of a level above background last
// asked that background work is still held out of the reserve: a minute,
// the commonest window of published quotas, so that the reserve is kept
// through a window in which the levels above came, and lent once a whole
// window has passed without them.
const reserveLend = time.Minute

// A backgroundReserve holds background work to 1 − BackgroundReserve of
// the rate while a level above asks, with a bucket of its own: a
// background request goes only once both the Rate's bucket and this one
// hold its units, and takes them from both. While the server publishes
// no quota after it did (one that publishes only near its limit has
// fallen silent below it), the pace is that of the rate the last
// published quota allowed, when lower than the current rate: the
// controller learns on without a cap, but background work does not spend
// at that pace the part of a window the levels above will want.
type backgroundReserve struct {
	aboveAt  time.Duration // when a level above background last asked
	above    bool          // one has asked
	capPerNs float64       // the rate the last published quota allowed, units a nanosecond; 0: none yet
	tokens   float64
	lastFill time.Duration
	// abovePerNs is the pace at which work above background went, units
	// a nanosecond, at aboveSent: an exponential average over aboveTau.
	abovePerNs float64
	aboveSent  time.Duration
	aboveFirst time.Duration // when work above background first went
}

// aboveTau is the time constant of the pace measured for the levels above
// background: ten seconds, long enough to smooth the gaps between
// requests, short enough to follow a burst of critical work as it starts.
const aboveTau = float64(10 * time.Second)

// sentAbove records that cost units of level went at now: for a level
// above background, they count in the pace background work leaves to the
// levels above.
func (r *Rate) sentAbove(now time.Duration, level, cost int) {
	if level == 0 || r.cfg.BackgroundReserve <= 0 {
		return
	}
	if r.bg.abovePerNs == 0 {
		r.bg.aboveFirst = now
	}
	r.bg.abovePerNs = r.aboveRaw(now) + float64(cost)/aboveTau
	r.bg.aboveSent = max(now, r.bg.aboveSent)
}

// abovePace is the pace of the levels above background at now, units a
// nanosecond. The average starts from nothing, so it is divided by the weight its
// samples have had since the first (at least a second's).
func (r *Rate) abovePace(now time.Duration) float64 {
	if r.bg.abovePerNs == 0 {
		return 0
	}
	since := max(float64(now-r.bg.aboveFirst), float64(time.Second))
	return r.aboveRaw(now) / -math.Expm1(-since/aboveTau)
}

// aboveRaw is the exponential average of abovePace, as it started from 0.
func (r *Rate) aboveRaw(now time.Duration) float64 {
	if now <= r.bg.aboveSent {
		return r.bg.abovePerNs
	}
	return r.bg.abovePerNs * math.Exp(-float64(now-r.bg.aboveSent)/aboveTau)
}

// asking records that a request of level asked at now.
func (r *Rate) asking(now time.Duration, level int) {
	if level > 0 && r.cfg.BackgroundReserve > 0 {
		r.bg.aboveAt, r.bg.above = now, true
	}
}

// reserveHeld reports whether a request of level is held out of the
// reserve at now.
func (r *Rate) reserveHeld(now time.Duration, level int) bool {
	return level == 0 && r.cfg.BackgroundReserve > 0 && !r.disabled && r.bg.above && now-r.bg.aboveAt < reserveLend
}

// bgPerNs is background work's pace at now while the reserve is held:
// 1 − BackgroundReserve of the rate. While nothing has tried the rate
// (untried), it is at most (1 − BackgroundReserve) / BackgroundReserve of
// the pace of the levels above, or its share of the initial rate when
// that is more.
func (r *Rate) bgPerNs(now time.Duration) float64 {
	base := r.perNs
	if r.published == 0 && r.bg.capPerNs > 0 {
		base = min(base, r.bg.capPerNs)
	}
	keep := r.cfg.BackgroundReserve
	pace := (1 - keep) * base
	if r.untried() {
		initial := (1 - keep) * r.initRate / float64(time.Minute)
		pace = min(pace, max((1-keep)/keep*r.abovePace(now), initial))
	}
	return pace
}

// untried reports whether nothing has yet tried the rate against the
// dependency: no throttle and no published quota has ended the slow
// start. A slow start's rate above the initial one says only what was
// asked for, which may be many times what the dependency allows, and
// background work at a share of it would spend a window's allowance before
// anything says how much there is (a server that publishes its figures
// only near its limit says nothing before): so background work keeps to
// its share of what the levels above send, the share the reserve keeps
// between them, and to its share of the initial rate.
func (r *Rate) untried() bool {
	return r.builtin && r.slowStart && r.published == 0
}

// bgSize is the reserve's bucket: Burst of background work's pace.
func (r *Rate) bgSize(now time.Duration) float64 {
	return max(r.bgPerNs(now)*float64(r.cfg.Burst), 1)
}

// bgTokensAt is what background work's bucket holds at now.
func (r *Rate) bgTokensAt(now time.Duration) float64 {
	t := r.bg.tokens
	if now > r.bg.lastFill {
		t += float64(now-r.bg.lastFill) * r.bgPerNs(now)
	}
	return min(t, r.bgSize(now))
}

// bgWait is how long from now until background work's bucket holds the
// units of a request of cost: 0 when it does.
func (r *Rate) bgWait(now time.Duration, cost int) time.Duration {
	deficit := min(float64(cost), r.bgSize(now)) - r.bgTokensAt(now)
	if deficit <= epsilon {
		return 0
	}
	return durationFor(deficit, r.bgPerNs(now))
}

// bgTake takes cost units from background work's bucket at now.
func (r *Rate) bgTake(now time.Duration, cost int) {
	r.bg.tokens = r.bgTokensAt(now) - float64(cost)
	r.bg.lastFill = max(now, r.bg.lastFill)
}

// followCap records the rate a published quota allows, for the pace of
// background work once the server falls silent.
func (r *Rate) followCap() {
	if r.published > 0 {
		r.bg.capPerNs = r.maxRate / float64(time.Minute)
	}
}

// TryAcquireLevel is TryAcquire for a request of level (0 for background
// work, 1 the default, 2 critical work): while a level above background has
// asked within the last minute and BackgroundReserve is above 0, a
// background request goes only as background work's pace allows, and
// retryAfter then counts that pace's wait too. A request above background
// that goes counts as its level asking; one refused counts when it is
// queued (EnqueueLevel).
//
// Background work that only the reserve holds is not demand the rate
// failed to meet: it does not make the rate rise, or the reserve would
// raise the rate until background work's share of it is all it wants, and
// the reserve would keep nothing. A request above background goes past
// background waiters that only the reserve holds.
func (r *Rate) TryAcquireLevel(now time.Duration, cost, level int) (ok bool, retryAfter time.Duration) {
	if cost > 0 && r.reserveHeld(now, level) {
		if d := r.bgWait(now, cost); d > 0 || r.heldOnly(now) {
			if !r.reserveAlone(now, level, cost) || r.queueWaits(now) {
				r.waited = true
			}
			return false, max(r.waitBehind(now, cost), d)
		}
	}
	if cost > 0 && level > 0 && r.heldOnly(now) && r.tokensAt(now)+epsilon >= r.need(cost) {
		r.takeAt(now, cost)
		r.asking(now, level)
		r.sentAbove(now, level, cost)
		return true, 0
	}
	if ok, retryAfter = r.TryAcquire(now, cost); !ok {
		return false, retryAfter
	}
	if cost > 0 && r.reserveHeld(now, level) {
		r.bgTake(now, cost)
	}
	r.asking(now, level)
	r.sentAbove(now, level, cost)
	return true, 0
}

// reserveAlone reports whether only the reserve holds a request of level
// and cost at now: it is background work held out of the reserve, and the
// bucket holds its units.
func (r *Rate) reserveAlone(now time.Duration, level, cost int) bool {
	return r.reserveHeld(now, level) && now >= r.lastFill && r.tokensAt(now)+epsilon >= r.need(cost)
}

// heldOnly reports whether the queue holds waiters and every one is
// background work that only the reserve holds at now.
func (r *Rate) heldOnly(now time.Duration) bool {
	n := len(r.q) - r.qHead
	return n > 0 && r.order.Waiting(0) == n && r.reserveAlone(now, 0, r.q[r.qHead].cost)
}

// queueWaits reports whether the queue holds demand the rate did not meet
// at now: a waiter that more than the reserve holds.
func (r *Rate) queueWaits(now time.Duration) bool {
	return r.qHead < len(r.q) && !r.heldOnly(now)
}

// waitBehind is the wait TryAcquire names for a request of cost at now
// that it refuses.
func (r *Rate) waitBehind(now time.Duration, cost int) time.Duration {
	return r.waitFor(now, r.qUnits, cost)
}

// bgHolds reports whether the reserve holds waiter h at now; when it does
// not and h is background work held out of the reserve, h's units are
// taken from background work's bucket as it goes.
func (r *Rate) bgHolds(now time.Duration, h waiter) bool {
	if !r.reserveHeld(now, h.level) {
		return false
	}
	if r.bgWait(now, h.cost) > 0 {
		return true
	}
	r.bgTake(now, h.cost)
	return false
}

// passHeld lets the first waiter above background go past a background
// head that the reserve holds at now, when the bucket holds its units: the
// reserve keeps the rate for the levels above, so they never wait on
// background work's pace.
func (r *Rate) passHeld(now time.Duration) (w Waiter, ok bool) {
	i := r.aboveHeldHead(now)
	if i < 0 {
		return Waiter{}, false
	}
	x := r.q[i]
	r.refill(now)
	if now < r.lastFill || r.tokens+epsilon < r.need(x.cost) {
		return Waiter{}, false
	}
	r.tokens -= float64(x.cost)
	r.counts.Units += int64(x.cost)
	r.admitted(now)
	r.sentAbove(now, x.level, x.cost)
	r.order.Leave(x.level, x.tag, true)
	r.qUnits -= int64(x.cost)
	copy(r.q[i:], r.q[i+1:])
	r.q[len(r.q)-1] = waiter{}
	r.q = r.q[:len(r.q)-1]
	return Waiter{ID: x.id, Cost: x.cost, Granted: true}, true
}

// aboveHeldHead is the index of the first waiter above background behind
// a background head that the reserve holds at now, or -1.
func (r *Rate) aboveHeldHead(now time.Duration) int {
	h := r.q[r.qHead]
	if !r.reserveHeld(now, h.level) || r.bgWait(now, h.cost) == 0 {
		return -1
	}
	for i := r.qHead + 1; i < len(r.q); i++ {
		if r.q[i].level > 0 {
			return i
		}
	}
	return -1
}
