package resilience

import (
	"math"
	"math/bits"
	"sync"
	"time"
)

// Finagle's integer scaling and window shape.
const (
	budgetScale  = 1000 // tokens per deposit (Finagle's ScaleFactor)
	budgetSlices = 10   // the window's slices (twitter/util WindowedAdder)
)

// A Budget bounds retries as a fraction of traffic, after Finagle's
// RetryBudget: every call deposits once, every retry withdraws, and a retry
// is allowed while the balance covers it. Over a TTL window it allows about
//
//	Ratio × (calls in the window) + MinRetriesPerSecond × TTL
//
// retries. Deposits and withdrawals both expire after TTL: the window is a
// ring of 10 slices, and a slice older than TTL drops out (twitter/util's
// WindowedAdder). Arithmetic is in integers, exact while a window's
// deposits fit in an int64 (9.2e15 calls): a deposit is 1000 tokens, a
// withdrawal floor(1000/Ratio) tokens (1 when Ratio is 0), and the floor a
// standing reserve of floor(MinRetriesPerSecond × TTL seconds ×
// withdrawal) tokens. The balance in retries is floor(tokens /
// withdrawal). A floor of more than math.MaxInt64 retries saturates there.
//
// A Budget belongs to one dependency: share it between the policies that
// call that dependency, and give other dependencies their own. It is safe
// for concurrent use. Its methods take the current time as an argument, so
// the rules can be tested on any clock; the runner passes time.Now().
//
// The runner deposits once per call, on the first attempt that reached the
// dependency, and withdraws before every retry of such an attempt. A
// self-imposed refusal (a *limit.RateLimitedError) neither deposits nor
// withdraws: it never joined the dependency's traffic.
type Budget struct {
	deposit, withdrawal int64 // tokens
	// The reserve, whole retries and the tokens left over (fewer than a
	// withdrawal). Held apart, and withdrawals counted in retries, because
	// in tokens a high floor or a costly retry (a small Ratio) overflows
	// int64.
	reserveRetries, reserveTokens int64
	slice                         time.Duration

	mu      sync.Mutex
	started bool
	epoch   time.Time // the start of slice 0
	cur     int64     // the number of the current slice
	slices  [budgetSlices]budgetSlice
}

// budgetSlice is one slice of the window: the tokens deposited in it and
// the retries withdrawn.
type budgetSlice struct{ tokens, retries int64 }

// NewBudget returns a budget with options o, or the validation error.
func NewBudget(o BudgetOptions) (*Budget, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	ttl, floor, ratio := o.resolve()
	b := &Budget{slice: ttl / budgetSlices, withdrawal: 1}
	// 1000/Ratio is at least 1 in the valid range; at 2^63 or above
	// (+Inf for a subnormal Ratio) it has no int64 value, and no call
	// count the slices can hold would pay for a retry: Ratio counts as 0.
	if w := math.Floor(budgetScale / ratio); ratio > 0 && w < 1<<63 {
		b.deposit, b.withdrawal = budgetScale, int64(w)
	}
	// floor(M × TTL / 1s) whole retries and remainder v/1s of one, which
	// is floor(withdrawal × v / 1s) < withdrawal tokens: together exactly
	// floor(M × withdrawal × TTL / 1s) tokens.
	n, v, ok := mulDiv(uint64(floor), uint64(ttl), uint64(time.Second))
	if !ok {
		b.reserveRetries = math.MaxInt64
	} else {
		t, _, _ := mulDiv(uint64(b.withdrawal), v, uint64(time.Second))
		b.reserveRetries, b.reserveTokens = int64(n), int64(t)
	}
	return b, nil
}

// mulDiv returns floor(x × y / d) and the remainder, computed in 128 bits;
// ok is false when the quotient exceeds math.MaxInt64.
func mulDiv(x, y, d uint64) (q, r uint64, ok bool) {
	hi, lo := bits.Mul64(x, y)
	if hi >= d {
		return 0, 0, false // the quotient needs more than 64 bits
	}
	q, r = bits.Div64(hi, lo, d)
	return q, r, q <= math.MaxInt64
}

// advance moves the window to now, clearing the slices that have expired.
// Time that runs backwards is read as the current slice. b.mu is held.
func (b *Budget) advance(now time.Time) {
	if !b.started {
		b.started, b.epoch = true, now
		return
	}
	n := int64(now.Sub(b.epoch) / b.slice)
	if n <= b.cur {
		return
	}
	if n-b.cur >= budgetSlices {
		b.slices = [budgetSlices]budgetSlice{}
	} else {
		for i := b.cur + 1; i <= n; i++ {
			b.slices[i%budgetSlices] = budgetSlice{}
		}
	}
	b.cur = n
}

// retries is the balance in whole retries, floor(tokens / withdrawal),
// saturated at math.MaxInt64; negative when deposits that paid for
// retries still in the window have expired. With the reserve as R retries
// and T tokens, D tokens deposited and N retries withdrawn in the window,
// it is R − N + floor((T + D) / withdrawal). b.mu is held.
func (b *Budget) retries() int64 {
	var d, n int64
	for _, s := range b.slices {
		d, n = d+s.tokens, n+s.retries
	}
	// floor((T + D) / withdrawal) without forming T + D: T < withdrawal,
	// so the remainders add up to at most one more retry.
	paid := d / b.withdrawal
	if b.reserveTokens >= b.withdrawal-d%b.withdrawal {
		paid++
	}
	left := paid - n // both in [0, MaxInt64]: no overflow
	if left > 0 && b.reserveRetries > math.MaxInt64-left {
		return math.MaxInt64
	}
	return b.reserveRetries + left
}

// credit credits one call made at now.
func (b *Budget) credit(now time.Time) {
	if b.deposit == 0 {
		return
	}
	b.mu.Lock()
	b.advance(now)
	b.slices[b.cur%budgetSlices].tokens += b.deposit
	b.mu.Unlock()
}

// withdraw takes one retry at now and reports whether the budget allowed
// it. A refused withdrawal changes nothing.
func (b *Budget) withdraw(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	if b.retries() < 1 {
		return false
	}
	b.slices[b.cur%budgetSlices].retries++
	return true
}

// balance is the number of retries the budget would allow at now.
func (b *Budget) balance(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return int(min(max(b.retries(), 0), math.MaxInt))
}
