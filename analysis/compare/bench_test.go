package compare

import (
	"math/rand/v2"
	"runtime"
	"strconv"
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

// BenchmarkRunMetrics: macro-F1, ECE and decided accuracy compared over
// 100,000 labelled pairs (50,000 examples × 2 rollouts) with the default
// options (the resample count capped by the permutation budget), against
// the per-row reward comparison of the same pairs.
func BenchmarkRunMetrics(b *testing.B) {
	const n = 100_000
	rng := rand.New(rand.NewPCG(5, 6))
	labels := []string{"Malicious", "Benign", "Abstain"}
	var a, c []Row
	for i := range n {
		key := strconv.Itoa(i/2) + "/" + strconv.Itoa(i%2)
		gold := labels[rng.IntN(2)]
		a = append(a, Row{Key: key, Values: map[string]float64{"reward": rng.Float64()}, Label: &Labelled{Gold: gold, Predicted: labels[rng.IntN(3)], Confidence: rng.Float64(), HasConfidence: true}})
		c = append(c, Row{Key: key, Values: map[string]float64{"reward": rng.Float64()}, Label: &Labelled{Gold: gold, Predicted: labels[rng.IntN(3)], Confidence: rng.Float64(), HasConfidence: true}})
	}
	p := Pair(a, c)
	b.Run("run-metrics", func(b *testing.B) {
		for b.Loop() {
			RunMetrics(p, Options{})
		}
	})
	b.Run("per-row-reward", func(b *testing.B) {
		for b.Loop() {
			Quantities(p, []string{"reward"}, Options{})
		}
	})
}
