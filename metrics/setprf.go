package metrics

// PRF is precision, recall and F1 with the raw tallies they came from
// (counts for unweighted, summed weights for weighted scoring). It is
// svbench's one implementation of set precision/recall: E2's rubric and
// report both score through it.
type PRF struct {
	TP        float64 `json:"tp"`
	FP        float64 `json:"fp"`
	FN        float64 `json:"fn"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// NewPRF derives precision, recall and F1 from tallies; each is 0 when its
// denominator is 0.
func NewPRF(tp, fp, fn float64) PRF {
	p := Div(tp, tp+fp)
	r := Div(tp, tp+fn)
	return PRF{TP: tp, FP: fp, FN: fn, Precision: p, Recall: r, F1: Div(2*p*r, p+r)}
}

// Add pools tallies (micro-averaging): precision and recall are recomputed
// from the summed counts.
func (a PRF) Add(b PRF) PRF { return NewPRF(a.TP+b.TP, a.FP+b.FP, a.FN+b.FN) }

// ScaleFP charges each false positive k times its weight: FP becomes k·FP
// and precision and F1 are recomputed (k = 1 changes nothing). A scorer
// uses k > 1 so that listing every candidate cannot pay.
func (a PRF) ScaleFP(k float64) PRF { return NewPRF(a.TP, a.FP*k, a.FN) }

// PrecisionDefined reports whether anything was predicted (TP + FP > 0);
// otherwise Precision is 0 by convention, not by measurement.
func (a PRF) PrecisionDefined() bool { return a.TP+a.FP > 0 }

// RecallDefined reports whether there was anything to find (TP + FN > 0).
func (a PRF) RecallDefined() bool { return a.TP+a.FN > 0 }

// F1Defined reports whether F1 measures anything: it is undefined only
// when nothing was to be found and nothing was predicted. When gold items
// exist but none was predicted (or only wrong ones were), F1 = 2·TP /
// (2·TP + FP + FN) = 0 is a real score.
func (a PRF) F1Defined() bool { return a.TP+a.FP+a.FN > 0 }

// Item is a set element with a weight (e.g. a finding id and its severity
// weight).
type Item struct {
	ID     string
	Weight float64
}

// SetPRF scores a predicted set against a gold set by membership; repeated
// ids count once.
func SetPRF(pred, gold []string) PRF {
	g := make(map[string]struct{}, len(gold))
	for _, id := range gold {
		g[id] = struct{}{}
	}
	p := make(map[string]struct{}, len(pred))
	for _, id := range pred {
		p[id] = struct{}{}
	}
	tp := 0
	for id := range p {
		if _, ok := g[id]; ok {
			tp++
		}
	}
	return NewPRF(float64(tp), float64(len(p)-tp), float64(len(g)-tp))
}

// WeightedSetPRF scores weighted sets: TP sums the gold weights of
// predicted ids present in gold, FP the predicted weights of ids absent
// from gold, FN the gold weights of ids not predicted. A repeated id keeps
// its last weight, as a Python dict built from the list would.
func WeightedSetPRF(pred, gold []Item) PRF {
	g, gOrder := lastWeights(gold)
	p, pOrder := lastWeights(pred)
	// Sum in input order so the float result is the same on every run.
	var tp, fp, fn float64
	for _, id := range pOrder {
		if gw, ok := g[id]; ok {
			tp += gw
		} else {
			fp += p[id]
		}
	}
	for _, id := range gOrder {
		if _, ok := p[id]; !ok {
			fn += g[id]
		}
	}
	return NewPRF(tp, fp, fn)
}

// lastWeights maps each id to its last weight and lists ids by first
// appearance.
func lastWeights(items []Item) (map[string]float64, []string) {
	m := make(map[string]float64, len(items))
	order := make([]string, 0, len(items))
	for _, it := range items {
		if _, ok := m[it.ID]; !ok {
			order = append(order, it.ID)
		}
		m[it.ID] = it.Weight
	}
	return m, order
}
