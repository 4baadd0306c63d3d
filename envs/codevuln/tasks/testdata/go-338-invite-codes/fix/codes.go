package codes

import (
	"crypto/rand"
	"math/big"
)

// Alphabet excludes look-alike characters (0/O, 1/I/l).
const Alphabet = "23456789ABCDEFGHJKLMNPQRSTUVWXYZ"

// Generator issues invitation and recovery codes.
type Generator struct{}

// NewGenerator returns a generator. The seed is ignored: codes come from the
// operating system's CSPRNG, so no seed can make them reproducible.
func NewGenerator(seed int64) *Generator {
	_ = seed
	return &Generator{}
}

var alphabetLen = big.NewInt(int64(len(Alphabet)))

func (g *Generator) code(n int) string {
	b := make([]byte, n)
	for i := range b {
		// rand.Int is uniform over [0, len) (no modulo bias).
		k, err := rand.Int(rand.Reader, alphabetLen)
		if err != nil {
			panic("codes: no system randomness: " + err.Error())
		}
		b[i] = Alphabet[k.Int64()]
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
