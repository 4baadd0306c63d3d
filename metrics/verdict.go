package metrics

import (
	"fmt"
	"math"
)

// z95 is the standard normal quantile of a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson is the Wilson score 95% interval of k successes in n trials; ok
// is false for n = 0 (no interval: the proportion is undefined).
func Wilson(k, n int) (lo, hi float64, ok bool) {
	if n <= 0 {
		return 0, 0, false
	}
	nf := float64(n)
	p := float64(k) / nf
	z2 := z95 * z95
	den := 1 + z2/nf
	center := (p + z2/(2*nf)) / den
	half := z95 * math.Sqrt(p*(1-p)/nf+z2/(4*nf*nf)) / den
	return max(0, center-half), min(1, center+half), true
}

// Proportion is k of n with its Wilson 95% interval. Value, Lo and Hi are
// nil when n = 0: an undefined proportion is shown as n/a, never as 0.
type Proportion struct {
	K     int      `json:"k"`
	N     int      `json:"n"`
	Value *float64 `json:"value"`
	Lo    *float64 `json:"ci_lo"`
	Hi    *float64 `json:"ci_hi"`
}

// NewProportion is k of n with its Wilson interval.
func NewProportion(k, n int) Proportion {
	p := Proportion{K: k, N: n}
	if lo, hi, ok := Wilson(k, n); ok {
		v := float64(k) / float64(n)
		p.Value, p.Lo, p.Hi = &v, &lo, &hi
	}
	return p
}

// String is "0.750 [0.301, 0.954] (3/4)", or "n/a (0/0)".
func (p Proportion) String() string {
	if p.Value == nil {
		return fmt.Sprintf("n/a (%d/%d)", p.K, p.N)
	}
	return fmt.Sprintf("%.3f [%.3f, %.3f] (%d/%d)", *p.Value, *p.Lo, *p.Hi, p.K, p.N)
}

// MaxExamples bounds the false-positive ids a VerdictQuality names.
const MaxExamples = 5

// VerdictQuality is a reward source's positive verdict measured against a
// ground truth (the executable verifier's solved): precision is how much
// of what the source pays for is real, recall how much of what is real it
// pays for. Its false positives are what a policy trained on the source
// learns to produce.
type VerdictQuality struct {
	Source string `json:"source"`
	// Positive says what counts as the source's positive verdict.
	Positive       string     `json:"positive"`
	TP             int        `json:"tp"`
	FP             int        `json:"fp"`
	FN             int        `json:"fn"`
	TN             int        `json:"tn"`
	Precision      Proportion `json:"precision"`
	Recall         Proportion `json:"recall"`
	FalsePositives []string   `json:"false_positive_examples,omitempty"`
}

// Add counts one row: pred is the source's positive verdict, truth the
// ground truth; id names the row if it is one of the first false positives.
func (q *VerdictQuality) Add(pred, truth bool, id string) {
	switch {
	case pred && truth:
		q.TP++
	case pred:
		q.FP++
		if len(q.FalsePositives) < MaxExamples {
			q.FalsePositives = append(q.FalsePositives, id)
		}
	case truth:
		q.FN++
	default:
		q.TN++
	}
	q.Precision, q.Recall = NewProportion(q.TP, q.TP+q.FP), NewProportion(q.TP, q.TP+q.FN)
}
