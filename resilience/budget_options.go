package resilience

import (
	"cmp"
	"time"

	"github.com/headroom-go/headroom/internal/problems"
)

// BudgetOptions configure a Budget. The zero value is a complete
// configuration: Finagle's RetryBudget defaults (twitter/finagle,
// RetryBudget.scala), 20 % of calls plus 10 retries a second, over 10 s.
// Zero fields (nil pointers) mean the defaults given beside them.
type BudgetOptions struct {
	// TTL is the window over which deposits and withdrawals count, in
	// [1 s, 60 s] (Finagle's bounds). It slides in 10 slices of TTL/10.
	// Default 10 s.
	TTL time.Duration
	// MinRetriesPerSecond is the floor: retries a second allowed even with
	// no traffic to pay for them. 0 or more; nil means 10, and new(0) a
	// budget that only traffic pays for.
	MinRetriesPerSecond *int
	// Ratio is the fraction of calls that may be retried on top of the
	// floor, in [0, 1000] (Finagle's percentCanRetry; 0.2 is 20 %); nil
	// means 0.2. With both Ratio and MinRetriesPerSecond 0 the budget
	// allows no retry. A Ratio below 1000/math.MaxInt64 (about 1.08e-16)
	// counts as 0: a retry would cost more tokens than an int64 holds, so
	// calls could not pay for one.
	Ratio *float64
}

// The defaults of BudgetOptions: Finagle's.
const (
	budgetTTL                 = 10 * time.Second
	budgetMinRetriesPerSecond = 10
	budgetRatio               = 0.2
)

// resolve returns o's settings with the defaults filled in.
func (o *BudgetOptions) resolve() (ttl time.Duration, floor int, ratio float64) {
	ttl, floor, ratio = cmp.Or(o.TTL, budgetTTL), budgetMinRetriesPerSecond, budgetRatio
	if o.MinRetriesPerSecond != nil {
		floor = *o.MinRetriesPerSecond
	}
	if o.Ratio != nil {
		ratio = *o.Ratio
	}
	return ttl, floor, ratio
}

// Validate returns every problem with o at once, joined with errors.Join;
// each is a *headroom.ConfigError naming the field. It returns nil when
// NewBudget would succeed.
func (o *BudgetOptions) Validate() error {
	l := problems.New("resilience")
	if o.TTL != 0 && (o.TTL < time.Second || o.TTL > time.Minute) {
		l.Add("TTL", o.TTL, "0 (the default, 10s) or a duration in [1s, 1m]")
	}
	if m := o.MinRetriesPerSecond; m != nil && *m < 0 {
		l.Add("MinRetriesPerSecond", *m, "0 or more")
	}
	if r := o.Ratio; r != nil && !(*r >= 0 && *r <= 1000) { // also refuses NaN
		l.Add("Ratio", *r, "a fraction in [0, 1000]")
	}
	return l.Err()
}
