package compare

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkCompare1M: one quantity over one million pairs (paired t, since
// the permutation budget is exceeded) with 200 bootstrap resamples, against
// the same with the default 2,000 on 100,000 pairs.
func BenchmarkCompare1M(b *testing.B) {
	for _, tc := range []struct {
		name string
		n    int
		reps int
	}{{"1M-pairs-200-reps", 1_000_000, 200}, {"100k-pairs-2000-reps", 100_000, 2000}} {
		b.Run(tc.name, func(b *testing.B) {
			rng := rand.New(rand.NewPCG(3, 4))
			a, c := make([]float64, tc.n), make([]float64, tc.n)
			for i := range a {
				a[i], c[i] = float64(rng.IntN(2)), float64(rng.IntN(2))
			}
			for b.Loop() {
				Compare("solved", a, c, Options{Reps: tc.reps})
			}
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heapMiB")
		})
	}
}
