package report

import "github.com/svbench/svbench/metrics"

// DetectionRates are a confusion matrix's detection metrics under svbench's
// one undefined-metric rule: a metric whose denominator is empty is nil —
// null in summary.json, "n/a" in tables, an Undefined key metric — never a
// 0 that reads as a score. (Reference-shaped blocks keep the reference's 0s;
// they say so.) F1 is 2·TP / (2·TP + FP + FN): undefined only with no
// positive gold and no positive call.
type DetectionRates struct {
	TPR, FPR, FNR, Precision, F1, Accuracy *float64
}

// Rates computes c's DetectionRates.
func Rates(c metrics.Confusion) DetectionRates {
	positives, negatives := c.TP+c.FN > 0, c.FP+c.TN > 0
	return DetectionRates{
		TPR:       Opt(c.TPR(), positives),
		FPR:       Opt(c.FPR(), negatives),
		FNR:       Opt(c.FNR(), positives),
		Precision: Opt(c.Precision(), c.TP+c.FP > 0),
		F1:        Opt(c.F1(), c.TP+c.FP+c.FN > 0),
		Accuracy:  Opt(c.Accuracy(), c.Decided() > 0),
	}
}

// Mean is sum/n under the same rule: nil when n is 0.
func Mean(sum float64, n int) *float64 { return Opt(sum/float64(max(n, 1)), n > 0) }
