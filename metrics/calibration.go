package metrics

import "math"

// NumBins is the number of equal-width confidence bins on [0, 1] used by
// ECE and reliability diagrams, as in the reference.
const NumBins = 10

// ClampUnit maps a confidence into [0, 1]; NaN becomes 0 (a confidence the
// model did not give is no confidence).
func ClampUnit(x float64) float64 {
	switch {
	case math.IsNaN(x) || x < 0:
		return 0
	case x > 1:
		return 1
	}
	return x
}

// BinOf returns the bin of a confidence in [0, 1]: bin b holds
// b/10 <= c < (b+1)/10, and the last bin is closed so 1.0 lands in bin 9.
// Edges are compared as the float values b/10, not via c·10, so a value such
// as 0.3 falls where a reader of the definition expects.
func BinOf(c float64) int {
	c = ClampUnit(c)
	b := int(c * NumBins)
	if b >= NumBins {
		return NumBins - 1
	}
	if b > 0 && c < float64(b)/NumBins {
		b--
	} else if b+1 < NumBins && c >= float64(b+1)/NumBins {
		b++
	}
	return b
}

// Calibration accumulates (confidence, correct) pairs for ECE, Brier and
// the reliability diagram. The zero value is ready; it never allocates.
type Calibration struct {
	n      int
	count  [NumBins]int
	conf   [NumBins]float64
	right  [NumBins]float64
	sqErrs float64
}

// Add records one prediction's confidence and whether it was right.
func (c *Calibration) Add(conf float64, correct bool) {
	conf = ClampUnit(conf)
	b := BinOf(conf)
	y := 0.0
	if correct {
		y = 1
	}
	c.n++
	c.count[b]++
	c.conf[b] += conf
	c.right[b] += y
	c.sqErrs += (conf - y) * (conf - y)
}

// N is the number of recorded predictions.
func (c *Calibration) N() int { return c.n }

// ECE is the expected calibration error: the count-weighted mean over bins
// of |accuracy − mean confidence|.
func (c *Calibration) ECE() float64 {
	if c.n == 0 {
		return 0
	}
	e := 0.0
	for b := range NumBins {
		k := c.count[b]
		if k == 0 {
			continue
		}
		fk := float64(k)
		e += fk / float64(c.n) * math.Abs(c.right[b]/fk-c.conf[b]/fk)
	}
	return e
}

// Brier is the mean squared difference between confidence and correctness.
func (c *Calibration) Brier() float64 { return Div(c.sqErrs, float64(c.n)) }

// Bin is one column of a reliability diagram.
type Bin struct {
	Lo, Hi         float64
	Count          int
	MeanConfidence float64
	Accuracy       float64
}

// Bins returns the reliability diagram; empty bins have zero means.
func (c *Calibration) Bins() []Bin {
	out := make([]Bin, NumBins)
	for b := range NumBins {
		k := float64(c.count[b])
		out[b] = Bin{
			Lo: float64(b) / NumBins, Hi: float64(b+1) / NumBins,
			Count:          c.count[b],
			MeanConfidence: Div(c.conf[b], k),
			Accuracy:       Div(c.right[b], k),
		}
	}
	return out
}
