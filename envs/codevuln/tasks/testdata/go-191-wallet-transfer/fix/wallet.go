package wallet

import (
	"errors"
	"math"
	"sync"
)

// FeeCents is charged to the sender of every transfer.
const FeeCents = 25

// Errors.
var (
	ErrInsufficient = errors.New("wallet: insufficient funds")
	ErrUnknown      = errors.New("wallet: unknown wallet")
	ErrOverflow     = errors.New("wallet: amount too large")
)

// Ledger holds wallet balances in cents.
type Ledger struct {
	mu       sync.Mutex
	balances map[string]uint64
}

// NewLedger returns an empty ledger.
func NewLedger() *Ledger { return &Ledger{balances: map[string]uint64{}} }

// Open creates a wallet with a zero balance.
func (l *Ledger) Open(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.balances[id]; !ok {
		l.balances[id] = 0
	}
}

// Balance returns the balance of id.
func (l *Ledger) Balance(id string) (uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.balances[id]
	if !ok {
		return 0, ErrUnknown
	}
	return b, nil
}

// Deposit adds cents to id.
func (l *Ledger) Deposit(id string, cents uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.balances[id]; !ok {
		return ErrUnknown
	}
	b := l.balances[id]
	if cents > math.MaxUint64-b {
		return ErrOverflow
	}
	l.balances[id] = b + cents
	return nil
}

// Withdraw removes cents from id.
func (l *Ledger) Withdraw(id string, cents uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.balances[id]
	if !ok {
		return ErrUnknown
	}
	// Unsigned subtraction cannot go negative: compare before subtracting.
	if cents > b {
		return ErrInsufficient
	}
	l.balances[id] = b - cents
	return nil
}

// Transfer moves cents from one wallet to another; the sender also pays FeeCents.
func (l *Ledger) Transfer(from, to string, cents uint64) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	fb, ok1 := l.balances[from]
	tb, ok2 := l.balances[to]
	if !ok1 || !ok2 {
		return ErrUnknown
	}
	if cents > math.MaxUint64-FeeCents {
		return ErrOverflow
	}
	debit := cents + FeeCents
	if debit > fb {
		return ErrInsufficient
	}
	if from != to && cents > math.MaxUint64-tb {
		return ErrOverflow
	}
	// Check everything before changing anything, so a failure leaves both
	// balances as they were.
	l.balances[from] = fb - debit
	l.balances[to] += cents
	return nil
}
