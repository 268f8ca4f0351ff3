package resilience

import (
	"math"
	"sync"
	"time"
)

// Retry budget defaults: Finagle's RetryBudget() (twitter/finagle,
// finagle-core/.../service/RetryBudget.scala; research/algorithms.md §6.1).
const (
	// DefaultBudgetTTL is how long a deposit or a withdrawal counts: 10 s.
	DefaultBudgetTTL = 10 * time.Second
	// DefaultMinRetriesPerSecond is the floor of retries a second that the
	// budget allows whatever the traffic: 10.
	DefaultMinRetriesPerSecond = 10
	// DefaultRetryRatio is the fraction of calls that may be retried: 0.2,
	// 20 %.
	DefaultRetryRatio = 0.2
)

// Finagle's integer scaling and window shape.
const (
	budgetScale  = 1000 // tokens per deposit (Finagle's ScaleFactor)
	budgetSlices = 10   // the window's slices (twitter/util WindowedAdder)
)

// BudgetOptions configure a Budget. All fields are used as given; the
// Default constants are Finagle's values.
type BudgetOptions struct {
	// TTL is the window over which deposits and withdrawals count, in
	// [1 s, 60 s] (Finagle's bounds). It slides in 10 slices of TTL/10.
	TTL time.Duration
	// MinRetriesPerSecond is the floor: retries a second allowed even with
	// no traffic to pay for them. 0 or more.
	MinRetriesPerSecond int
	// Ratio is the fraction of calls that may be retried on top of the
	// floor, in [0, 1000] (Finagle's percentCanRetry; 0.2 is 20 %). With
	// both Ratio and MinRetriesPerSecond 0 the budget allows no retry.
	Ratio float64
}

// Validate lists every problem with o at once (errors.Join of
// *OptionError), or returns nil.
func (o BudgetOptions) Validate() error {
	var errs []error
	if o.TTL < time.Second || o.TTL > time.Minute {
		errs = append(errs, &OptionError{Field: "Budget.TTL", Value: o.TTL, Want: "a duration in [1s, 1m]"})
	}
	if o.MinRetriesPerSecond < 0 {
		errs = append(errs, &OptionError{Field: "Budget.MinRetriesPerSecond", Value: o.MinRetriesPerSecond, Want: "0 or more"})
	}
	if !(o.Ratio >= 0 && o.Ratio <= 1000) { // also refuses NaN
		errs = append(errs, &OptionError{Field: "Budget.Ratio", Value: o.Ratio, Want: "a fraction in [0, 1000]"})
	}
	return join(errs)
}

// A Budget bounds retries as a fraction of traffic, after Finagle's
// RetryBudget: every call deposits once, every retry withdraws, and a retry
// is allowed while the balance covers it. Over a TTL window it allows about
//
//	Ratio × (calls in the window) + MinRetriesPerSecond × TTL
//
// retries. Deposits and withdrawals both expire after TTL: the window is a
// ring of 10 slices, and a slice older than TTL drops out (twitter/util's
// WindowedAdder). Arithmetic is in integers: a deposit is 1000 tokens, a
// withdrawal floor(1000/Ratio) tokens (1 when Ratio is 0), and the floor a
// standing reserve of MinRetriesPerSecond × TTL seconds × withdrawal.
//
// A Budget belongs to one dependency: share it between the policies that
// call that dependency, and give other dependencies their own. It is safe
// for concurrent use. Its methods take the current time, so a simulator
// can drive it on virtual time; the runner passes time.Now().
//
// The runner deposits once per call, on the first attempt that reached the
// dependency, and withdraws before every retry of such an attempt. A
// self-imposed refusal (a *limit.RateLimitedError) neither deposits nor
// withdraws: it never joined the dependency's traffic.
type Budget struct {
	opts                         BudgetOptions
	deposit, withdrawal, reserve int64
	slice                        time.Duration

	mu      sync.Mutex
	started bool
	epoch   time.Time // the start of slice 0
	cur     int64     // the number of the current slice
	slices  [budgetSlices]int64
}

// NewBudget returns a budget with options o, or the validation error.
func NewBudget(o BudgetOptions) (*Budget, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	b := &Budget{opts: o, slice: o.TTL / budgetSlices, withdrawal: 1}
	if o.Ratio > 0 {
		b.deposit = budgetScale
		b.withdrawal = max(int64(math.Floor(budgetScale/o.Ratio)), 1)
	}
	b.reserve = int64(o.MinRetriesPerSecond) * b.withdrawal * int64(o.TTL) / int64(time.Second)
	return b, nil
}

// Options returns the options the budget was built with.
func (b *Budget) Options() BudgetOptions { return b.opts }

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
		b.slices = [budgetSlices]int64{}
	} else {
		for i := b.cur + 1; i <= n; i++ {
			b.slices[i%budgetSlices] = 0
		}
	}
	b.cur = n
}

// count is the balance in tokens. b.mu is held.
func (b *Budget) count() int64 {
	s := b.reserve
	for _, v := range b.slices {
		s += v
	}
	return s
}

// Deposit credits one call made at now.
func (b *Budget) Deposit(now time.Time) {
	if b.deposit == 0 {
		return
	}
	b.mu.Lock()
	b.advance(now)
	b.slices[b.cur%budgetSlices] += b.deposit
	b.mu.Unlock()
}

// TryWithdraw takes one retry at now and reports whether the budget allowed
// it. A refused withdrawal changes nothing.
func (b *Budget) TryWithdraw(now time.Time) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	if b.count() < b.withdrawal {
		return false
	}
	b.slices[b.cur%budgetSlices] -= b.withdrawal
	return true
}

// Balance is the number of retries the budget would allow at now.
func (b *Budget) Balance(now time.Time) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.advance(now)
	return int(max(b.count(), 0) / b.withdrawal)
}
