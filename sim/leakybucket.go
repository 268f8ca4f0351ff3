package sim

import (
	"math"
	"math/bits"
	"time"
)

// leakyBucket is nginx's limit_req (ngx_http_limit_req_module, "the leaky
// bucket method"), in nginx's own arithmetic: the rate in thousandths of a
// unit a second, the excess in thousandths of a unit, the clock in whole
// milliseconds, every division truncated.
//
// The first request finds no state: it is accepted with an excess of 0.
// Each later request of u units, ms milliseconds after the last time the
// state moved, makes
//
//	excess = max(stored − rate × ms / 1000 + 1000 × u, 0)
//
// (the excess that leaked since, plus this request; the clamp comes after
// the request is added, so a request that finds the bucket drained adds
// nothing). It is refused when excess > 1000 × burst, and then changes
// nothing; otherwise excess is stored, and the time with it unless ms is 0.
// An accepted request is served at once when excess ≤ 1000 × delay
// (delay: nginx's delay=, huge for nodelay, 0 by default) and otherwise held
// for (excess − 1000 × delay) × 1000 / rate milliseconds: the excess beyond
// delay leaves at the rate. nginx counts requests; the model counts each
// request's units as that many requests arriving together, so with requests
// of one unit it is nginx exactly.
//
// nginx publishes nothing; for the other choices of Server.Publish, the
// remaining allowance is the units that could arrive at once without a
// refusal, the reset is when the excess has leaked to 0 (or with
// Server.UnitReset, when one more unit would be taken), and a refused
// request fits once enough has leaked. Every request fits eventually.
type leakyBucket struct {
	window    time.Duration
	rate      int64 // thousandths of a unit a second
	burst     int64 // thousandths
	delay     int64 // thousandths; served at once up to this excess
	unitReset bool
	fresh     bool  // no request yet
	excess    int64 // thousandths, as of last
	last      int64 // ms
}

// nginxRate is quota units per window in thousandths of a unit a second,
// truncated as nginx truncates "r/m" (30r/m is 500).
func nginxRate(quota int, window time.Duration) int64 {
	if quota <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(quota)*1000, uint64(time.Second))
	if hi >= uint64(window) {
		return 1 << 62 // unreachable for a window of 1 s or more
	}
	q, _ := bits.Div64(hi, lo, uint64(window))
	return int64(q)
}

func newLeakyBucket(s Server, q int) *leakyBucket {
	b := &leakyBucket{window: s.Window, rate: nginxRate(q, s.Window), burst: 1000 * int64(s.Burst),
		delay: 1000 * int64(s.Delay), unitReset: s.UnitReset, fresh: true}
	if s.NoDelay {
		b.delay = 1 << 62 // nginx: NGX_MAX_INT_T_VALUE / 1000
	}
	return b
}

func millis(t time.Duration) int64 { return int64(t / time.Millisecond) }

// leak is what has leaked from the stored excess by ms, rate × ms / 1000
// truncated; past any excess there can be, it says so without overflowing.
func (b *leakyBucket) leak(ms int64) int64 {
	hi, lo := bits.Mul64(uint64(b.rate), uint64(ms-b.last))
	if hi != 0 || lo > math.MaxInt64 {
		return math.MaxInt64 / 2
	}
	return int64(lo) / 1000
}

// leaked is the excess at ms, from the stored state: what nginx would
// compute for a request of 0 units.
func (b *leakyBucket) leaked(ms int64) int64 {
	if b.fresh {
		return 0
	}
	return max(b.excess-b.leak(ms), 0)
}

func (b *leakyBucket) setQuota(at time.Duration, units int) {
	// Leak at the old rate until the step, by nginx's rule.
	if ms := millis(at); !b.fresh && ms != b.last {
		b.excess, b.last = b.leaked(ms), ms
	}
	b.rate = nginxRate(units, b.window)
}

func (b *leakyBucket) used(now time.Duration) int { return int(b.leaked(millis(now)) / 1000) }

// leakedBy is the first instant from which at least need thousandths have
// leaked from the stored state: floor(rate × ms / 1000) ≥ need.
func (b *leakyBucket) leakedBy(need int64) time.Duration {
	if need <= 0 {
		return time.Duration(b.last) * time.Millisecond
	}
	ms := (need*1000 + b.rate - 1) / b.rate
	return time.Duration(b.last+ms) * time.Millisecond
}

func (b *leakyBucket) decide(now time.Duration, units int) decision {
	ms := millis(now)
	add := 1000 * int64(units)
	var d decision
	if b.fresh {
		b.fresh, b.excess, b.last = false, 0, ms
		d.ok = true
	} else if e := max(b.excess-b.leak(ms)+add, 0); e <= b.burst {
		b.excess = e
		if ms != b.last {
			b.last = ms
		}
		d.ok = true
		if e > b.delay {
			d.delay = time.Duration((e-b.delay)*1000/b.rate) * time.Millisecond
		}
	} else {
		d.fitsAt = max(b.leakedBy(b.excess+add-b.burst), now+1)
	}
	now0 := b.leaked(ms) // the excess now, this request included
	d.remaining = int(max(b.burst-now0, 0) / 1000)
	if b.unitReset {
		d.resetAt = max(b.leakedBy(b.excess+1000-b.burst), now)
	} else {
		d.resetAt = max(b.leakedBy(b.excess), now)
	}
	return d
}
