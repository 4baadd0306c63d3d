package advantage

import (
	"math/rand/v2"
	"runtime"
	"testing"
)

// BenchmarkAnalyse1M: one million rollouts (250,000 groups of 4, four
// components) through every scheme, the collapse, decider, Spearman and
// ±20% sensitivity figures. Reports the heap in use after the analysis.
func BenchmarkAnalyse1M(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	in := &Input{Names: []string{"accuracy", "calibration", "cost", "format"}, Weights: []float64{1, 0.2, 0.5, 0.1}}
	for g := range 250_000 {
		grp := Group{Key: string(rune(g))}
		for range 4 {
			grp.Rollouts = append(grp.Rollouts, Rollout{Components: []float64{
				float64(rng.IntN(2)), rng.Float64(), float64(rng.IntN(3) - 1), float64(rng.IntN(2)),
			}})
		}
		in.Groups = append(in.Groups, grp)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Analyse(in); err != nil {
			b.Fatal(err)
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heapMiB")
}
