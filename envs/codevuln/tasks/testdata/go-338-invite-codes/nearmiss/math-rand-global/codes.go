package codes

import (
	"math/rand"
	"sync"
)

// Alphabet excludes look-alike characters (0/O, 1/I/l).
const Alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// Generator issues invitation and recovery codes.
type Generator struct {
	mu  sync.Mutex
	rnd *rand.Rand
}

// NewGenerator returns a generator.
func NewGenerator(seed int64) *Generator {
	_ = seed
	return &Generator{}
}

func (g *Generator) code(n int) string {
	g.mu.Lock()
	defer g.mu.Unlock()
	b := make([]byte, n)
	for i := range b {
		b[i] = Alphabet[rand.Intn(len(Alphabet))]
	}
	return string(b)
}

// InviteCode returns a 10-character invitation code.
func (g *Generator) InviteCode() string { return g.code(10) }

// RecoveryCodes returns n distinct codes like "7KQ2-M9XD".
func (g *Generator) RecoveryCodes(n int) []string {
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		c := g.code(8)
		c = c[:4] + "-" + c[4:]
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}
