package report

import (
	"math/rand/v2"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

func TestRatesUndefinedIsNil(t *testing.T) {
	// No positive call: precision has an empty denominator.
	r := Rates(metrics.Confusion{TN: 3, FN: 1})
	if r.Precision != nil {
		t.Errorf("precision %v, want nil", *r.Precision)
	}
	if r.F1 == nil || *r.F1 != 0 || r.TPR == nil || *r.TPR != 0 || r.Accuracy == nil || *r.Accuracy != 0.75 {
		t.Errorf("rates %+v", r)
	}
	if e := Rates(metrics.Confusion{}); e.Accuracy != nil || e.F1 != nil || e.FPR != nil {
		t.Errorf("empty matrix: %+v", e)
	}
	if Mean(0, 0) != nil || *Mean(3, 2) != 1.5 {
		t.Error("Mean")
	}
}

// TestAllRowsF1: an abstention scores as the negative answer would (a
// miss on a positive row, nothing on a negative one), so KeyF1 is the
// decided-rows F1 of the matrix with every abstention answered negative,
// and abstaining never raises it; one right positive call among abstentions
// is 1.0 on decided rows only.
func TestAllRowsF1(t *testing.T) {
	c := metrics.Confusion{TP: 3, TN: 4, FP: 1, FN: 2, Abstain: 5} // 2 of the 5 on positive rows
	answeredNegative := metrics.Confusion{TP: 3, TN: 4 + 3, FP: 1, FN: 2 + 2}
	if got, want := AllRowsF1(c, 2), answeredNegative.F1(); got != want || got != 6.0/11 {
		t.Errorf("AllRowsF1 %v, want %v (6/11)", got, want)
	}
	one := metrics.Confusion{TP: 1, Abstain: 179}
	if one.F1() != 1 || AllRowsF1(one, 89) != 2.0/91 {
		t.Errorf("one right call among abstentions: decided F1 %v, all-rows F1 %v", one.F1(), AllRowsF1(one, 89))
	}
	if AllRowsF1Defined(metrics.Confusion{TN: 2, Abstain: 1}, 0) || !AllRowsF1Defined(metrics.Confusion{Abstain: 1}, 1) {
		t.Error("AllRowsF1Defined: defined iff a positive row or a positive call")
	}
	b := &BinaryRun{Obs: []BinaryObs{{Outcome: metrics.TP, Positive: true}, {Outcome: metrics.Abstain, Positive: true},
		{Outcome: metrics.Abstain}, {Outcome: metrics.TN}}}
	all := b.Sample([]int{0, 1, 2, 3})
	if got := AllRowsF1Of(&all); got != 2.0/3 {
		t.Errorf("AllRowsF1Of %v, want 2/3 (TP 1, a miss by abstention)", got)
	}
	negOnly := b.Sample([]int{0, 2, 2, 3})
	if got := AllRowsF1Of(&negOnly); got != 1 {
		t.Errorf("AllRowsF1Of %v, want 1 (abstentions on negative rows only)", got)
	}
}

// TestBinaryBootstrapIsEachStatsOwn: Bootstrap reads each resample once for
// all its statistics; its intervals are, to the bit, those of each
// statistic computed on its own over the same resamples.
func TestBinaryBootstrapIsEachStatsOwn(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 5))
	b := &BinaryRun{}
	outcomes := []metrics.Outcome{metrics.TP, metrics.TN, metrics.FP, metrics.FN, metrics.Abstain}
	for ex := range 300 {
		for range 1 + ex%3 { // rollouts: the bootstrap resamples examples
			o := BinaryObs{Outcome: outcomes[rng.IntN(len(outcomes))], Confidence: rng.Float64()}
			o.Positive = o.Outcome == metrics.TP || o.Outcome == metrics.FN || o.Outcome == metrics.Abstain && rng.IntN(2) == 0
			b.Obs = append(b.Obs, o)
			b.Example = append(b.Example, ex)
		}
	}
	names := []string{"acc", "acc_decided", "f1", "f1_decided", "fnr", "ece"}
	got := b.Bootstrap(names, []BinaryStat{ConfusionOf(AllRowsAccuracy), ConfusionOf(metrics.Confusion.Accuracy), AllRowsF1Of,
		ConfusionOf(metrics.Confusion.F1), ConfusionOf(metrics.Confusion.FNR), ECEOf}, &artifact.Metadata{Seed: 9}, Options{BootstrapReps: 400})
	confusion := func(idx []int) (c metrics.Confusion, abstainedPos int) {
		for _, k := range idx {
			c.Add(b.Obs[k].Outcome)
			if b.Obs[k].Outcome == metrics.Abstain && b.Obs[k].Positive {
				abstainedPos++
			}
		}
		return c, abstainedPos
	}
	own := []metrics.Stat{
		func(idx []int) float64 { c, _ := confusion(idx); return AllRowsAccuracy(c) },
		func(idx []int) float64 { c, _ := confusion(idx); return c.Accuracy() },
		func(idx []int) float64 { return AllRowsF1(confusion(idx)) },
		func(idx []int) float64 { c, _ := confusion(idx); return c.F1() },
		func(idx []int) float64 { c, _ := confusion(idx); return c.FNR() },
		func(idx []int) float64 {
			var cal metrics.Calibration
			for _, k := range idx {
				if o := b.Obs[k]; o.Outcome != metrics.Abstain {
					cal.Add(o.Confidence, o.Correct())
				}
			}
			return cal.ECE()
		},
	}
	want := metrics.ClusterBootstrapMulti(metrics.Clusters(len(b.Example), func(k int) int { return b.Example[k] }), own,
		400, Options{}.BootstrapSeed(&artifact.Metadata{Seed: 9}))
	for i, n := range names {
		if got[n] != want[i] {
			t.Errorf("%s: one pass %+v, on its own %+v", n, got[n], want[i])
		}
		if got[n].Lo == got[n].Hi {
			t.Errorf("%s: a degenerate interval %+v proves nothing", n, got[n])
		}
	}
}
