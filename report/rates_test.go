package report

import (
	"testing"

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
	if got := b.AllRowsF1Stat([]int{0, 1, 2, 3}); got != 2.0/3 {
		t.Errorf("AllRowsF1Stat %v, want 2/3 (TP 1, a miss by abstention)", got)
	}
	if got := b.AllRowsF1Stat([]int{0, 2, 2, 3}); got != 1 {
		t.Errorf("AllRowsF1Stat %v, want 1 (abstentions on negative rows only)", got)
	}
}
