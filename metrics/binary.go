// Package metrics holds the statistics svbench reports compute: binary
// confusion counts, calibration (ECE, Brier, reliability bins), asymmetric
// cost, selective prediction (risk–coverage, AURC), set-valued precision and
// recall, and seeded bootstrap confidence intervals. It knows nothing about
// environments; report builders feed it numbers.
//
// Every ratio with a zero denominator is 0, as in the reference report
// generator, so an empty or fully abstained run yields zeros, never NaN.
// The reference's exceptions are kept too: FNR is 1 − TPR (1 with no
// positives) and cost-weighted accuracy is 1 with nothing decided. Reports
// that must not show such a value as a score check the counts (see
// Confusion.Decided and PRF.PrecisionDefined).
package metrics

// Div returns a/b, or 0 when b is 0.
func Div(a, b float64) float64 {
	if b == 0 {
		return 0
	}
	return a / b
}

// Outcome is one binary prediction against its truth.
type Outcome uint8

// Outcomes of a binary prediction; Abstain means no positive/negative call.
const (
	TP Outcome = iota
	TN
	FP
	FN
	Abstain
)

// Classify maps a prediction to its outcome. abstain wins over pred.
func Classify(predPositive, actualPositive, abstain bool) Outcome {
	switch {
	case abstain:
		return Abstain
	case predPositive && actualPositive:
		return TP
	case predPositive:
		return FP
	case actualPositive:
		return FN
	default:
		return TN
	}
}

// Confusion counts binary outcomes. The zero value is ready to use and it
// never allocates, so bootstrap statistics can build one per resample.
type Confusion struct {
	TP, TN, FP, FN, Abstain int
}

// Add records one outcome.
func (c *Confusion) Add(o Outcome) {
	switch o {
	case TP:
		c.TP++
	case TN:
		c.TN++
	case FP:
		c.FP++
	case FN:
		c.FN++
	default:
		c.Abstain++
	}
}

// Decided is the number of non-abstained predictions.
func (c Confusion) Decided() int { return c.TP + c.TN + c.FP + c.FN }

// Total counts every prediction, abstentions included.
func (c Confusion) Total() int { return c.Decided() + c.Abstain }

// TPR is recall on the positive class: TP / (TP + FN).
func (c Confusion) TPR() float64 { return Div(float64(c.TP), float64(c.TP+c.FN)) }

// FPR is FP / (FP + TN).
func (c Confusion) FPR() float64 { return Div(float64(c.FP), float64(c.FP+c.TN)) }

// FNR is 1 - TPR, as the reference defines it (so it is 1 when there are no
// positives at all).
func (c Confusion) FNR() float64 { return 1 - c.TPR() }

// Precision is TP / (TP + FP).
func (c Confusion) Precision() float64 { return Div(float64(c.TP), float64(c.TP+c.FP)) }

// F1 is the harmonic mean of precision and TPR.
func (c Confusion) F1() float64 {
	p, r := c.Precision(), c.TPR()
	return Div(2*p*r, p+r)
}

// Accuracy is (TP + TN) over non-abstained predictions.
func (c Confusion) Accuracy() float64 {
	return Div(float64(c.TP+c.TN), float64(c.Decided()))
}

// AbstainRate is abstentions over all predictions.
func (c Confusion) AbstainRate() float64 {
	return Div(float64(c.Abstain), float64(c.Total()))
}

// Cost weighs errors asymmetrically: in security a missed attack (FN)
// usually costs far more than a false alarm (FP).
type Cost struct {
	FNWeight, FPWeight float64
}

// ReferenceCost is the reference generator's weighting: FN 10, FP 1.
var ReferenceCost = Cost{FNWeight: 10, FPWeight: 1}

// Total is FN·FNWeight + FP·FPWeight.
func (w Cost) Total(c Confusion) float64 {
	return float64(c.FN)*w.FNWeight + float64(c.FP)*w.FPWeight
}

// WeightedAccuracy is 1 - total / (n · max(FNWeight, FPWeight)) with n the
// non-abstained predictions (the reference's denominator, pinned by its
// parity vectors): the share of the worst possible cost avoided. With
// nothing decided no cost was incurred and it is 1, as the reference's
// report generator returns; callers that must tell that case apart check
// c.Decided().
func (w Cost) WeightedAccuracy(c Confusion) float64 {
	d := float64(c.Decided()) * max(w.FNWeight, w.FPWeight)
	if d == 0 {
		return 1
	}
	return 1 - w.Total(c)/d
}
