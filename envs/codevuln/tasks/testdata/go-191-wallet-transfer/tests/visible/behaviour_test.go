package wallet

import (
	"errors"
	"testing"
)

func TestFlow(t *testing.T) {
	l := NewLedger()
	l.Open("ann")
	l.Open("bob")
	if err := l.Deposit("ann", 10_000); err != nil {
		t.Fatal(err)
	}
	if err := l.Withdraw("ann", 2_000); err != nil {
		t.Fatal(err)
	}
	if err := l.Transfer("ann", "bob", 1_000); err != nil {
		t.Fatal(err)
	}
	a, _ := l.Balance("ann")
	b, _ := l.Balance("bob")
	if a != 10_000-2_000-1_000-FeeCents || b != 1_000 {
		t.Fatalf("balances %d %d", a, b)
	}
	if err := l.Deposit("zed", 1); !errors.Is(err, ErrUnknown) {
		t.Fatalf("unknown wallet: %v", err)
	}
}
