package configaudit

import (
	"math"

	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/verify"
)

// Violation is one (tool-qualified rule id, severity) pair, the unit both the
// model's answer and the oracle are made of.
type Violation struct {
	ID       string          `json:"id"`
	Severity verify.Severity `json:"severity"`
}

// Detection is a severity-weighted precision/recall/F1 with its tallies.
type Detection = metrics.PRF

// weightMap keeps the last severity seen per id, as a Python dict built from
// the list does in the reference.
func weightMap(vs []Violation) map[string]float64 {
	m := make(map[string]float64, len(vs))
	for _, v := range vs {
		m[v.ID] = v.Severity.Weight()
	}
	return m
}

// orderedIDs lists distinct ids in first-seen order so float sums are
// accumulated in the reference's order (dict iteration = insertion order).
func orderedIDs(vs []Violation) []string {
	seen := make(map[string]bool, len(vs))
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		if !seen[v.ID] {
			seen[v.ID] = true
			out = append(out, v.ID)
		}
	}
	return out
}

// weighted turns violations into metrics items weighted by severity.
func weighted(vs []Violation) []metrics.Item {
	items := make([]metrics.Item, len(vs))
	for i, v := range vs {
		items[i] = metrics.Item{ID: v.ID, Weight: v.Severity.Weight()}
	}
	return items
}

// ScoreDetection is the reference's severity-weighted detection score
// (metrics.WeightedSetPRF over severity weights): TP sums the oracle weights
// of predicted ids present in the oracle, FP the predicted weights of ids
// absent from it, FN the oracle weights not predicted; a repeated id keeps
// its last severity. fpFactor multiplies FP (1 reproduces the reference; the
// strict rubric uses more so that listing every id cannot pay), so the
// returned FP is the weight charged.
func ScoreDetection(pred, oracle []Violation, fpFactor float64) Detection {
	d := metrics.WeightedSetPRF(weighted(pred), weighted(oracle))
	if fpFactor != 1 {
		d = d.ScaleFP(fpFactor)
	}
	return d
}

// PatchDelta is the reference's patch credit: the summed oracle weights of
// ids no longer reported after the patch.
func PatchDelta(oracle []Violation, post []Violation) float64 {
	gone := make(map[string]bool, len(post))
	for _, v := range post {
		gone[v.ID] = true
	}
	ow := weightMap(oracle)
	var d float64
	for _, id := range orderedIDs(oracle) {
		if !gone[id] {
			d += ow[id]
		}
	}
	return d
}

// ReferenceFinal is the reference's final reward before the rubric's
// max(0, ·): F1 + patch delta + a format bonus or penalty, clamped to [-1, 2].
// patchDelta < 0 means "no patch was scored".
func ReferenceFinal(f1 float64, patchDelta float64, validJSON bool) float64 {
	r := f1
	if patchDelta > 0 {
		r += patchDelta
	}
	if validJSON {
		r += 0.05
	} else {
		r -= 0.25
	}
	return math.Max(-1, math.Min(2, r))
}
