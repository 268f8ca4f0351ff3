package resilience

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The zero BudgetOptions is a complete configuration: Finagle's defaults.
func TestBudgetFinagleDefaults(t *testing.T) {
	b, err := NewBudget(BudgetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Finagle: deposit 1000, withdrawal 1000/0.2 = 5000, reserve 10 × 10
	// retries (500000 tokens).
	if b.deposit != 1000 || b.withdrawal != 5000 || b.reserveRetries != 100 || b.reserveTokens != 0 {
		t.Errorf("deposit %d, withdrawal %d, reserve %d retries + %d tokens; want 1000, 5000, 100 + 0",
			b.deposit, b.withdrawal, b.reserveRetries, b.reserveTokens)
	}
	t0 := time.Unix(1000, 0)
	if got := b.balance(t0); got != 100 {
		t.Errorf("balance %d; want 100 (the floor over 10 s)", got)
	}
	for range 50 {
		b.credit(t0)
	}
	if got := b.balance(t0); got != 110 {
		t.Errorf("balance after 50 calls %d; want 110 (20 %% of 50 on top)", got)
	}
}

func TestBudgetDeniesAndRefills(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b, _ := NewBudget(BudgetOptions{TTL: 10 * time.Second, MinRetriesPerSecond: new(1), Ratio: new(0.0)})
	for i := range 10 {
		if !b.withdraw(t0.Add(time.Duration(i) * time.Second)) {
			t.Fatalf("withdrawal %d refused; the floor allows 10 per 10 s", i)
		}
	}
	if b.withdraw(t0.Add(9 * time.Second)) {
		t.Fatal("11th withdrawal allowed")
	}
	// Debits expire after the TTL: the first slice's leaves at 10 s.
	if !b.withdraw(t0.Add(10 * time.Second)) {
		t.Fatal("no refill after the first debit expired")
	}
	if got := b.balance(t0.Add(25 * time.Second)); got != 10 {
		t.Errorf("balance after the window %d; want 10", got)
	}
}

func TestBudgetDepositsExpire(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b, _ := NewBudget(BudgetOptions{TTL: time.Second, MinRetriesPerSecond: new(0), Ratio: new(0.5)})
	for range 4 {
		b.credit(t0)
	}
	if got := b.balance(t0); got != 2 {
		t.Fatalf("balance %d; want 2", got)
	}
	if got := b.balance(t0.Add(time.Second)); got != 0 {
		t.Errorf("balance after the TTL %d; want 0", got)
	}
	empty, _ := NewBudget(BudgetOptions{TTL: time.Second, MinRetriesPerSecond: new(0), Ratio: new(0.0)})
	empty.credit(t0)
	if empty.withdraw(t0) {
		t.Error("an empty budget allowed a retry")
	}
}

func TestBudgetOptionsValidate(t *testing.T) {
	_, err := NewBudget(BudgetOptions{TTL: 500 * time.Millisecond, MinRetriesPerSecond: new(-1), Ratio: new(math.NaN())})
	if d := cmp.Diff([]string{"TTL", "MinRetriesPerSecond", "Ratio"}, fields(err)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if _, err := NewBudget(BudgetOptions{TTL: 2 * time.Minute}); err == nil {
		t.Error("TTL above 60 s: no error")
	}
}

// The floor is MinRetriesPerSecond × TTL retries whatever a retry costs in
// tokens: a small Ratio (a costly retry) or a high floor must not overflow
// the reserve.
func TestBudgetFloorHoldsForSmallRatioAndHighFloor(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, c := range []struct {
		o    BudgetOptions
		want int
	}{
		{BudgetOptions{TTL: time.Minute, Ratio: new(1e-5)}, 600},
		{BudgetOptions{TTL: time.Minute, Ratio: new(1.1e-16)}, 600}, // withdrawal near MaxInt64
		{BudgetOptions{TTL: time.Minute, Ratio: new(1e-17)}, 600},   // withdrawal beyond int64
		{BudgetOptions{TTL: time.Minute, Ratio: new(5e-324)}, 600},  // 1000/Ratio is +Inf
		{BudgetOptions{TTL: time.Minute, MinRetriesPerSecond: new(100_000)}, 6_000_000},
		{BudgetOptions{TTL: 1500 * time.Millisecond, MinRetriesPerSecond: new(3), Ratio: new(1e-16)}, 4},       // 4.5 retries
		{BudgetOptions{TTL: time.Minute, MinRetriesPerSecond: new(math.MaxInt), Ratio: new(1.0)}, math.MaxInt}, // saturates
	} {
		b, err := NewBudget(c.o)
		if err != nil {
			t.Fatal(err)
		}
		if got := b.balance(t0); got != c.want {
			t.Errorf("%+v: balance %d with no traffic; want %d (the floor)", c.o, got, c.want)
		}
		if !b.withdraw(t0) {
			t.Errorf("%+v: the floor refused a retry", c.o)
		}
		if got := b.balance(t0); got != c.want-1 {
			t.Errorf("%+v: balance %d after a retry; want %d", c.o, got, c.want-1)
		}
	}
}

// A Ratio so small that a retry costs more tokens than calls could deposit
// lets calls pay for no retry, rather than wrapping the cost to a few
// tokens.
func TestBudgetTinyRatioPaysForNoRetry(t *testing.T) {
	t0 := time.Unix(1000, 0)
	for _, ratio := range []float64{1e-17, 5e-324} {
		b, err := NewBudget(BudgetOptions{TTL: time.Second, MinRetriesPerSecond: new(0), Ratio: &ratio})
		if err != nil {
			t.Fatal(err)
		}
		for range 1000 {
			b.credit(t0)
		}
		if got := b.balance(t0); got != 0 || b.withdraw(t0) {
			t.Errorf("Ratio %g, 1000 calls: balance %d; want 0 and no retry", ratio, got)
		}
	}
}

// The part of the floor short of a whole retry (TTL 1.5 s at 1 retry a
// second) still counts: deposits add to it.
func TestBudgetFractionalFloorAddsToDeposits(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b, err := NewBudget(BudgetOptions{TTL: 1500 * time.Millisecond, MinRetriesPerSecond: new(1), Ratio: new(0.5)})
	if err != nil {
		t.Fatal(err)
	}
	if got := b.balance(t0); got != 1 {
		t.Fatalf("balance %d; want 1 (1.5 retries of floor)", got)
	}
	b.credit(t0) // half a retry: with the floor's half, a whole one
	if got := b.balance(t0); got != 2 {
		t.Errorf("balance after one call %d; want 2", got)
	}
}
