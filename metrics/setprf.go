package metrics

// PRF is precision, recall and F1 with the raw tallies they came from
// (counts for unweighted, summed weights for weighted scoring).
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
