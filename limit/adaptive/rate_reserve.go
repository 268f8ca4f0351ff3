package adaptive

import "time"

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
// 1 − BackgroundReserve of the rate.
func (r *Rate) bgPerNs(now time.Duration) float64 {
	base := r.perNs
	if r.published == 0 && r.bg.capPerNs > 0 {
		base = min(base, r.bg.capPerNs)
	}
	return (1 - r.cfg.BackgroundReserve) * base
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
func (r *Rate) TryAcquireLevel(now time.Duration, cost, level int) (ok bool, retryAfter time.Duration) {
	if cost > 0 && r.reserveHeld(now, level) {
		if d := r.bgWait(now, cost); d > 0 {
			r.waited = true
			return false, max(r.waitBehind(now, cost), d)
		}
	}
	if ok, retryAfter = r.TryAcquire(now, cost); !ok {
		return false, retryAfter
	}
	if cost > 0 && r.reserveHeld(now, level) {
		r.bgTake(now, cost)
	}
	r.asking(now, level)
	return true, 0
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
