package dataset

import "math/rand/v2"

// Permutation returns a seeded permutation of [0, n). The generator is PCG
// seeded from the value alone, so a seed means the same order on every
// machine and Go release.
func Permutation(n int, seed uint64) []int {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	return rng.Perm(n)
}
