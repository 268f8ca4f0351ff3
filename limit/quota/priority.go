package quota

import (
	"cmp"
	"context"
	"math"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
	"github.com/headroom-go/headroom/limit"
)

// Reserves keeps more of a key's allowance back from requests of the lower
// priority levels (limit.Priority), on top of the guard's reserve: a
// request of a level whose reserve the remaining allowance is inside waits
// for the reset, while the levels above it go on. Each field is a fraction
// of the key's limit (of what its bucket holds, when no limit is
// published), in [0, 1); the zero Reserves keeps nothing more back, and
// the guard then reads a request's priority only to order the callers it
// holds (higher levels first).
//
// A level's reserve is lent while it is unused: it is kept back only while
// a request of a level above has asked the key within the last window (the
// key's window when the guard knows it, else a minute), and taken back as
// soon as one asks. And it is lent beyond what the levels above will ask
// for before the key's reset at the pace they have asked lately (an
// exponential average over ten seconds): a reserve of a fifth of the limit
// keeps a fifth back when the reset is far and the levels above are busy,
// and a second's worth of their demand when the reset is a second away, as
// a sliding window's is once it is full. So background work may spend the
// allowance that nothing else will want before it comes back, and never
// spends the part kept for critical work while critical work is asking.
type Reserves struct {
	// Default is kept back from requests of limit.Default.
	Default float64 `json:"default,omitempty"`
	// Background is kept back from requests of limit.Background: at least
	// Default, since a lower level keeps back all a higher one does.
	Background float64 `json:"background,omitempty"`
}

// levelReserves is Reserves by fairshare level: background, default,
// critical (0).
type levelReserves [3]float64

func (r Reserves) levels() levelReserves { return levelReserves{r.Background, r.Default, 0} }

// any reports whether a level keeps anything back.
func (r levelReserves) any() bool { return r != levelReserves{} }

// defaultLendWindow is how long a level counts as asking after its last
// request when the key's window is unknown: a minute, the commonest window
// of published quotas (GitHub's secondary limits, OpenAI's and Anthropic's
// per-minute ones).
const defaultLendWindow = int64(time.Minute)

// demandTau is the time constant of each level's measured demand: ten
// seconds, long enough to smooth the gaps between one client's requests,
// short enough to follow a burst of critical work as it starts.
const demandTau = float64(10 * time.Second)

// ask records that a request of level and cost asked the key at n: its
// level's demand, in units a nanosecond, decays by e^(−Δt/demandTau) and
// gains cost/demandTau.
func (e *entry) ask(level int, n, cost int64) {
	e.demand[level] = e.demandAt(level, n) + float64(cost)/demandTau
	e.asked[level] = n
}

// demandAt is level's demand at n, units a nanosecond.
func (e *entry) demandAt(level int, n int64) float64 {
	at := e.asked[level]
	if at == 0 || n <= at {
		return e.demand[level]
	}
	return e.demand[level] * math.Exp(-float64(n-at)/demandTau)
}

// check records the problems of r, for a guard whose base reserve is base.
func (r Reserves) check(l *problems.List, base float64) {
	for _, f := range []struct {
		field string
		v     float64
	}{{"Reserves.Default", r.Default}, {"Reserves.Background", r.Background}} {
		// The sum is judged only against a valid base, which reports its
		// own problem.
		if math.IsNaN(f.v) || f.v < 0 || f.v >= 1 || f.v > 0 && base >= 0 && base < 1 && f.v+base >= 1 {
			l.Add(f.field, f.v, "a fraction in [0, 1) that leaves room above ReserveFraction, such as 0.2")
		}
	}
	if r.Background < r.Default {
		l.Add("Reserves.Background", r.Background, "at least Reserves.Default: a lower level keeps back all that a higher one does")
	}
}

// levelOf is the fairshare level of p, Default's for an invalid one.
func levelOf(p limit.Priority) int {
	if p.Validate() != nil {
		return 1
	}
	return int(p) + 1
}

// held is what the key keeps back from level at n on top of its reserve:
// while a level above has asked within the lending window, the level's
// share of its limit, or what the levels above will ask for until the
// reset at their recent pace when that is less; else nothing (lent). e.mu
// is held.
func (e *entry) held(level int, n int64, c *config) int64 {
	f := c.levels[level]
	if f == 0 {
		return 0
	}
	lend := defaultLendWindow
	if e.window > 0 {
		lend = e.window
	}
	asking := false
	want := 0.0
	for above := level + 1; above < len(e.asked); above++ {
		if a := e.asked[above]; a != 0 && n-a < lend {
			asking = true
			want += e.demandAt(above, n)
		}
	}
	if !asking {
		return 0
	}
	most := reserve{Fraction: f}.of(cmp.Or(e.limit, e.top()))
	if e.reset <= n {
		return most // no reset ahead to measure against: all of it
	}
	return min(most, int64(math.Ceil(want*float64(e.reset-n))))
}

// admitBehind is admit for an attempt of level that goes behind the callers
// of higher levels Acquire holds for the key: while one is held, the
// attempt waits for its turn (it is woken when that caller leaves), or for
// AssumedReset at the most before it asks again. e.mu is held.
func (e *entry) admitBehind(n, cost int64, level int, c *config) time.Duration {
	for above := level + 1; above < len(e.holding); above++ {
		if e.holding[above] > 0 {
			return c.assumedReset
		}
	}
	return e.admit(n, cost, level, c)
}

// A levelHold is one caller's place among those Acquire holds for a key, by
// priority level. Its level is read from the caller's context only once it
// matters: when the caller has to wait, or finds others held.
type levelHold struct {
	e       *entry
	level   int
	known   bool // level was read
	holding bool // counted in e.held
}

func (h *levelHold) read(ctx context.Context) {
	h.level, h.known = levelOf(limit.PriorityFrom(ctx)), true
}

// hold counts the caller as held at its level.
func (h *levelHold) hold() {
	if h.holding {
		return
	}
	h.e.mu.Lock()
	h.e.holding[h.level]++
	h.e.mu.Unlock()
	h.holding = true
}

// leave takes the caller out of the held ones and wakes the others: those
// of lower levels may be next.
func (h *levelHold) leave() {
	if !h.holding {
		return
	}
	h.e.mu.Lock()
	h.e.holding[h.level]--
	h.e.changed()
	h.e.mu.Unlock()
	h.holding = false
}

// TryAcquirePriorityAt is TryAcquireAt for an attempt of priority p: the
// reserve it stops at is the guard's reserve and what Options.Reserves
// keeps back from p's level, and it counts as p's level asking the key.
// An invalid p counts as limit.Default.
func (g *Guard) TryAcquirePriorityAt(key string, now time.Time, cost int, p limit.Priority) (ok bool, retryAfter time.Duration) {
	d, _ := g.admit(key, now, int64(cost), levelOf(p), false)
	return d == 0, d
}
