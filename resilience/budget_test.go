package resilience

import (
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBudgetFinagleDefaults(t *testing.T) {
	b, err := NewBudget(DefaultBudgetOptions())
	if err != nil {
		t.Fatal(err)
	}
	// Finagle: deposit 1000, withdrawal 1000/0.2 = 5000, reserve 10 × 10 × 5000.
	if b.deposit != 1000 || b.withdrawal != 5000 || b.reserve != 500_000 {
		t.Errorf("deposit %d, withdrawal %d, reserve %d; want 1000, 5000, 500000", b.deposit, b.withdrawal, b.reserve)
	}
	t0 := time.Unix(1000, 0)
	if got := b.Balance(t0); got != 100 {
		t.Errorf("balance %d; want 100 (the floor over 10 s)", got)
	}
	for range 50 {
		b.Deposit(t0)
	}
	if got := b.Balance(t0); got != 110 {
		t.Errorf("balance after 50 calls %d; want 110 (20 %% of 50 on top)", got)
	}
}

func TestBudgetDeniesAndRefills(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b, _ := NewBudget(BudgetOptions{TTL: 10 * time.Second, MinRetriesPerSecond: 1, Ratio: 0})
	for i := range 10 {
		if !b.TryWithdraw(t0.Add(time.Duration(i) * time.Second)) {
			t.Fatalf("withdrawal %d refused; the floor allows 10 per 10 s", i)
		}
	}
	if b.TryWithdraw(t0.Add(9 * time.Second)) {
		t.Fatal("11th withdrawal allowed")
	}
	// Debits expire after the TTL: the first slice's leaves at 10 s.
	if !b.TryWithdraw(t0.Add(10 * time.Second)) {
		t.Fatal("no refill after the first debit expired")
	}
	if got := b.Balance(t0.Add(25 * time.Second)); got != 10 {
		t.Errorf("balance after the window %d; want 10", got)
	}
}

func TestBudgetDepositsExpire(t *testing.T) {
	t0 := time.Unix(1000, 0)
	b, _ := NewBudget(BudgetOptions{TTL: time.Second, Ratio: 0.5})
	for range 4 {
		b.Deposit(t0)
	}
	if got := b.Balance(t0); got != 2 {
		t.Fatalf("balance %d; want 2", got)
	}
	if got := b.Balance(t0.Add(time.Second)); got != 0 {
		t.Errorf("balance after the TTL %d; want 0", got)
	}
	empty, _ := NewBudget(BudgetOptions{TTL: time.Second})
	empty.Deposit(t0)
	if empty.TryWithdraw(t0) {
		t.Error("an empty budget allowed a retry")
	}
}

func TestBudgetOptionsValidate(t *testing.T) {
	err := BudgetOptions{TTL: 500 * time.Millisecond, MinRetriesPerSecond: -1, Ratio: math.NaN()}.Validate()
	if d := cmp.Diff([]string{"Budget.TTL", "Budget.MinRetriesPerSecond", "Budget.Ratio"}, fields(err)); d != "" {
		t.Errorf("problems (-want +got):\n%s", d)
	}
	if _, err := NewBudget(BudgetOptions{TTL: 2 * time.Minute}); err == nil {
		t.Error("TTL above 60 s: no error")
	}
}
