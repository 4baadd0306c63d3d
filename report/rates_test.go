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
