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

// Names of the three accuracy quantities of a classification report with
// abstention (E1, E4): one name per quantity in summary.json's key_metrics
// and ci95, report.md, the terminal headline, the scoreboard, the
// leaderboard and the dashboard (issue #44). Unparsed answers count as
// abstentions, as everywhere in these reports.
//
//   - KeyAccuracy: correct / scored rows. An abstention is a wrong row, so
//     abstaining can never raise it; it is E1's main (ranking) metric.
//   - KeyAccuracyDecided: correct / decided rows, the selective accuracy.
//     It is the reference's metrics.detection.accuracy and
//     metrics.abstention.accuracy_non_abstained (names its summary schema and
//     parity vectors pin, kept in summary.json's metrics block), and
//     compare's accuracy_decided. Abstaining on every row but one right
//     answer makes it 1.0, so it never ranks.
//   - KeyDecidedRate: decided / scored rows (1 − abstain rate), the
//     coverage of the selective accuracy beside it. Not "coverage": that
//     name is taken by the share of attempted rows the model answered.
//
// KeyAccuracy = KeyDecidedRate × KeyAccuracyDecided.
const (
	KeyAccuracy        = "accuracy"
	KeyAccuracyDecided = "accuracy_decided"
	KeyDecidedRate     = "decided_rate"
)

// AllRowsAccuracy is KeyAccuracy of c: (TP + TN) over every scored row,
// abstentions included; 0 on no rows (the bootstrap's statistic).
func AllRowsAccuracy(c metrics.Confusion) float64 {
	return metrics.Div(float64(c.TP+c.TN), float64(c.Total()))
}

// DecidedRate is KeyDecidedRate of c: decided over scored rows; 0 on no rows.
func DecidedRate(c metrics.Confusion) float64 {
	return metrics.Div(float64(c.Decided()), float64(c.Total()))
}

// Names of the two detection F1 quantities of E1's and E4's reports (the
// positive class is the attack, Malicious or Phishing; issue #44):
//
//   - KeyF1: F1 over every scored row, 2·TP / (2·TP + FP + FN + A⁺) with
//     A⁺ the abstentions (and unparsed answers) on positive rows: an
//     abstention on an attack is a miss, one on a benign row is neither a
//     hit nor a false alarm. Abstaining on a row therefore scores exactly
//     as answering the negative label would, so it can never raise KeyF1;
//     it is E4's main (ranking) metric (E1 ranks by KeyAccuracy).
//   - KeyF1Decided: F1 over decided rows, abstentions left out of the
//     confusion matrix (the reference's metrics.detection.f1, kept under
//     that name in summary.json's metrics block). One right positive call
//     and abstentions everywhere else make it 1.0, so it never ranks.
const (
	KeyF1        = "f1"
	KeyF1Decided = "f1_decided"
)

// AllRowsF1 is KeyF1 of c with abstainedPositives abstentions on positive
// rows (c.Abstain counts them with the rest): 2·TP / (2·TP + FP + FN +
// abstainedPositives), 0 with nothing to count (the bootstrap's
// statistic; AllRowsF1Defined says when it is a score).
func AllRowsF1(c metrics.Confusion, abstainedPositives int) float64 {
	return metrics.Div(float64(2*c.TP), float64(2*c.TP+c.FP+c.FN+abstainedPositives))
}

// AllRowsF1Defined reports whether AllRowsF1 has anything to count: a
// positive row or a positive call (Rates' rule for F1, abstentions on
// positive rows included).
func AllRowsF1Defined(c metrics.Confusion, abstainedPositives int) bool {
	return c.TP+c.FP+c.FN+abstainedPositives > 0
}
