package wallet

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func snapshot(l *Ledger, ids ...string) []uint64 {
	var out []uint64
	for _, id := range ids {
		b, _ := l.Balance(id)
		out = append(out, b)
	}
	return out
}

func refused(t *testing.T, l *Ledger, what string, op func() error) {
	t.Helper()
	before := snapshot(l, "ann", "bob")
	if err := op(); err == nil {
		t.Errorf("%s succeeded; balances now %v (were %v)", what, snapshot(l, "ann", "bob"), before)
	}
	if after := snapshot(l, "ann", "bob"); after[0] != before[0] || after[1] != before[1] {
		t.Errorf("%s failed but changed balances %v -> %v", what, before, after)
	}
}

func TestUnderflowAndOverflow(t *testing.T) {
	l := NewLedger()
	l.Open("ann")
	l.Open("bob")
	l.Deposit("ann", 100)
	refused(t, l, "withdraw 101 of 100", func() error { return l.Withdraw("ann", 101) })
	refused(t, l, "withdraw max", func() error { return l.Withdraw("ann", math.MaxUint64) })
	refused(t, l, "transfer 90 + fee of 100", func() error { return l.Transfer("ann", "bob", 90) })
	refused(t, l, "transfer wrapping amount", func() error { return l.Transfer("ann", "bob", math.MaxUint64-FeeCents+1) })
	refused(t, l, "transfer max", func() error { return l.Transfer("ann", "bob", math.MaxUint64) })
	l.Deposit("bob", math.MaxUint64-10)
	refused(t, l, "deposit wrapping", func() error { return l.Deposit("bob", 11) })
	refused(t, l, "transfer into full wallet", func() error { return l.Transfer("ann", "bob", 50) })
	if err := l.Withdraw("ann", 100); err != nil {
		t.Errorf("withdraw exact balance: %v", err)
	}
	if err := l.Withdraw("ann", 1); !errors.Is(err, ErrInsufficient) {
		t.Errorf("withdraw from empty: %v", err)
	}
}

// A model of the ledger in big-enough arithmetic: every operation must
// succeed exactly when the model says so, and balances must match.
func TestGenerated(t *testing.T) {
	rng := rand.New(rand.NewPCG(191, 15))
	ids := []string{"a", "b", "c"}
	l := NewLedger()
	model := map[string]uint64{}
	for _, id := range ids {
		l.Open(id)
		model[id] = 0
	}
	amount := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return math.MaxUint64 - uint64(rng.IntN(100))
		case 1:
			return uint64(rng.IntN(200))
		default:
			return uint64(rng.IntN(5000))
		}
	}
	for i := 0; i < 3000; i++ {
		x, y := ids[rng.IntN(3)], ids[rng.IntN(3)]
		c := amount()
		var err error
		var ok bool
		switch rng.IntN(3) {
		case 0:
			ok = c <= math.MaxUint64-model[x]
			err = l.Deposit(x, c)
			if ok {
				model[x] += c
			}
		case 1:
			ok = c <= model[x]
			err = l.Withdraw(x, c)
			if ok {
				model[x] -= c
			}
		default:
			ok = c <= math.MaxUint64-FeeCents && c+FeeCents <= model[x] && (x == y || c <= math.MaxUint64-model[y])
			err = l.Transfer(x, y, c)
			if ok {
				model[x] -= c + FeeCents
				model[y] += c
			}
		}
		if ok != (err == nil) {
			t.Fatalf("op %d on %s/%s amount %d: err=%v, model says ok=%v", i, x, y, c, err, ok)
		}
		for _, id := range ids {
			if b, _ := l.Balance(id); b != model[id] {
				t.Fatalf("op %d: balance %s = %d, want %d", i, id, b, model[id])
			}
		}
	}
}
