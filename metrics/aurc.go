package metrics

// Thresholds is the number of confidence thresholds of the risk–coverage
// curve: 0.00, 0.01, …, 1.00.
const Thresholds = 101

// RCPoint is one point of the risk–coverage curve.
type RCPoint struct {
	Threshold float64 `json:"threshold"`
	Coverage  float64 `json:"coverage"`
	Risk      float64 `json:"risk"`
	Count     int     `json:"count"`
}

// RiskCoverage accumulates predictions for selective-prediction analysis.
// For each threshold t it keeps how many predictions have confidence >= t
// and how many of those are wrong, in O(1) per Add.
type RiskCoverage struct {
	n       int
	atLeast [Thresholds]int // rows whose highest passed threshold is i
	wrongAt [Thresholds]int
}

// topThreshold is the largest i with i/100 <= c (−1 when c < 0), using the
// same float thresholds as the reference (i/100).
func topThreshold(c float64) int {
	if !(c >= 0) {
		return -1
	}
	if c >= 1 {
		return Thresholds - 1
	}
	i := int(c * 100)
	for i+1 < Thresholds && float64(i+1)/100 <= c {
		i++
	}
	for i >= 0 && float64(i)/100 > c {
		i--
	}
	return i
}

// Add records one decided prediction.
func (r *RiskCoverage) Add(conf float64, correct bool) {
	r.n++
	i := topThreshold(conf)
	if i < 0 {
		return
	}
	r.atLeast[i]++
	if !correct {
		r.wrongAt[i]++
	}
}

// Curve returns the 101 points in threshold order. A threshold nobody
// reaches has coverage 0 and risk 0, as in the reference (this matters for
// AURC when no confidence reaches 1.0).
func (r *RiskCoverage) Curve() []RCPoint {
	pts := make([]RCPoint, Thresholds)
	cnt, wrong := 0, 0
	for i := Thresholds - 1; i >= 0; i-- {
		cnt += r.atLeast[i]
		wrong += r.wrongAt[i]
		p := RCPoint{Threshold: float64(i) / 100, Count: cnt}
		if cnt > 0 {
			p.Coverage = float64(cnt) / float64(r.n)
			p.Risk = float64(wrong) / float64(cnt)
		}
		pts[i] = p
	}
	return pts
}

// AURC is the area under the risk–coverage curve (trapezoid rule over
// coverage); lower is better.
func (r *RiskCoverage) AURC() float64 { return AURC(r.Curve()) }

// AURC integrates a curve given in threshold order (coverage descending).
func AURC(pts []RCPoint) float64 {
	a := 0.0
	for i := 1; i < len(pts); i++ {
		a += (pts[i-1].Coverage - pts[i].Coverage) * (pts[i].Risk + pts[i-1].Risk) / 2
	}
	return a
}
