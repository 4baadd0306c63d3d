package advantage

import (
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
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

// genGroups yields the benchmark's groups from a seeded generator, the
// same groups on every call, without keeping them.
func genGroups(groups int) Source {
	return func(yield func(Group) error) error {
		rng := rand.New(rand.NewPCG(1, 2))
		rs := make([]Rollout, 4)
		for g := range groups {
			for i := range rs {
				rs[i] = Rollout{Components: []float64{float64(rng.IntN(2)), rng.Float64(), float64(rng.IntN(3) - 1), float64(rng.IntN(2))}}
			}
			if err := yield(Group{Key: strconv.Itoa(g), Rollouts: rs}); err != nil {
				return err
			}
		}
		return nil
	}
}

// peakHeap samples the heap's live objects while fn runs and returns the
// largest value seen, in MiB.
func peakHeap(fn func()) float64 {
	runtime.GC()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	var peak atomic.Uint64
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(sample)
			if v := sample[0].Value.Uint64(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(done)
	<-stopped
	return float64(peak.Load()) / (1 << 20)
}

// BenchmarkAdvantagesMemory1M: one million rollouts (250,000 groups of 4,
// four components), in memory (the batch built as an Input, then Analyse)
// against streamed (AnalyseStream reading the groups three times from a
// generator). Reports the peak heap of each; the figures are identical
// (TestAnalyseStreamMatchesAnalyse).
func BenchmarkAdvantagesMemory1M(b *testing.B) {
	const groups = 250_000
	names, weights := []string{"accuracy", "calibration", "cost", "format"}, []float64{1, 0.2, 0.5, 0.1}
	b.Run("in-memory", func(b *testing.B) {
		var peak float64
		for b.Loop() {
			peak = peakHeap(func() {
				in := &Input{Names: names, Weights: weights}
				_ = genGroups(groups)(func(g Group) error {
					g.Rollouts = slices.Clone(g.Rollouts)
					in.Groups = append(in.Groups, g)
					return nil
				})
				if _, err := Analyse(in); err != nil {
					b.Fatal(err)
				}
			})
		}
		b.ReportMetric(peak, "peakMiB")
	})
	b.Run("stream", func(b *testing.B) {
		var peak float64
		for b.Loop() {
			peak = peakHeap(func() {
				if _, err := AnalyseStream(names, weights, genGroups(groups)); err != nil {
					b.Fatal(err)
				}
			})
		}
		b.ReportMetric(peak, "peakMiB")
	})
}
