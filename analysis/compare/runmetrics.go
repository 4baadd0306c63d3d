package compare

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/svbench/svbench/metrics"
)

// Labelled is what run-level metrics read from a classification row: the
// gold label, the predicted label ("" when the answer did not parse) and
// the stated confidence.
type Labelled struct {
	Gold          string
	Predicted     string
	Confidence    float64
	HasConfidence bool
}

// abstain is the label every classification environment uses for
// declining to decide; it is never a correct decision.
const abstain = "Abstain"

// Run-level metrics: not means of per-row values, so their uncertainty
// comes from resampling whole examples, never from per-row differences.
const (
	MetricMacroF1  = "macro_f1"
	MetricECE      = "ece"
	MetricAccDecid = "accuracy_decided"
)

// runMetricNames in report order; lowerIsBetter marks ECE.
var runMetricNames = []string{MetricMacroF1, MetricECE, MetricAccDecid}

// RunMetrics compares the non-decomposable metrics of labelled rows —
// macro-F1 over the gold classes, expected calibration error of the stated
// confidence on decided rows, and accuracy on decided rows — with a paired
// bootstrap over examples (the rollouts of an example move together, and
// both runs are resampled with the same draw) for the 95% interval and an
// example-swap permutation test for p (under H0 the two runs' answers to an
// example are exchangeable). Rows without labels on both sides are left
// out; nil when no pair has them.
func RunMetrics(p Pairs, opts Options) []Quantity {
	opts = opts.withDefaults()
	exIdx := map[string]int{}
	var examples [][]int
	classSet := map[string]bool{}
	for i := range p.A {
		la, lb := p.A[i].Label, p.B[i].Label
		if la == nil || lb == nil || la.Gold == "" {
			continue
		}
		k := exampleOf(p.A[i].Key)
		j, ok := exIdx[k]
		if !ok {
			j = len(examples)
			exIdx[k] = j
			examples = append(examples, nil)
		}
		examples[j] = append(examples[j], i)
		classSet[la.Gold] = true
	}
	if len(examples) == 0 {
		return nil
	}
	delete(classSet, abstain)
	classes := slices.Sorted(func(yield func(string) bool) {
		for c := range classSet {
			if !yield(c) {
				return
			}
		}
	})
	rows := 0
	for _, e := range examples {
		rows += len(e)
	}
	// Each resample re-totals every example (twice: bootstrap and
	// permutation), so run-level metrics get a quarter of the permutation
	// budget, and never fewer than 200 resamples.
	reps, test := opts.Reps, "bootstrap over examples; example-swap permutation"
	if budget := opts.PermutationBudget / 4; rows*reps > budget {
		reps = max(200, budget/rows)
		test += fmt.Sprintf(" (%d resamples: capped by the budget)", reps)
	}
	// Every metric is a function of summed counts, so each example is
	// reduced once to its counts in both runs, kept sparse (an example
	// touches a handful of the counters) in one flat array; a resample then
	// only adds those entries.
	ev := newEvaluator(classes)
	type entry struct {
		k    int32
		a, b float64
	}
	off := make([]int, len(examples)+1)
	var ents []entry
	va, vb := make([]float64, ev.dim), make([]float64, ev.dim)
	ta, tb := make([]float64, ev.dim), make([]float64, ev.dim)
	hasConf := false
	for e, members := range examples {
		clear(va)
		clear(vb)
		for _, i := range members {
			ev.add(va, p.A[i].Label)
			ev.add(vb, p.B[i].Label)
			hasConf = hasConf || p.A[i].Label.HasConfidence || p.B[i].Label.HasConfidence
		}
		for k := range va {
			if va[k] != 0 || vb[k] != 0 {
				ents = append(ents, entry{int32(k), va[k], vb[k]})
				ta[k] += va[k]
				tb[k] += vb[k]
			}
		}
		off[e+1] = len(ents)
	}
	obsA, obsB := ev.values(ta), ev.values(tb)
	// Bootstrap: resample r uses its own PCG stream (seed, r), as the
	// project's bootstrap does, so results depend only on the seed.
	diffs := make([][]float64, len(runMetricNames))
	sa, sb := make([]float64, ev.dim), make([]float64, ev.dim)
	for r := range reps {
		rng := rand.New(rand.NewPCG(opts.Seed, uint64(r)))
		clear(sa)
		clear(sb)
		for range examples {
			e := rng.IntN(len(examples))
			for _, x := range ents[off[e]:off[e+1]] {
				sa[x.k] += x.a
				sb[x.k] += x.b
			}
		}
		ma, mb := ev.values(sa), ev.values(sb)
		for m := range runMetricNames {
			diffs[m] = append(diffs[m], mb[m]-ma[m])
		}
	}
	// Permutation: swap the two runs' answers to each example with
	// probability ½. Only examples whose counts differ can move the totals,
	// so only their differences are kept.
	var dents []entry
	var doff []int
	for e := range examples {
		start := len(dents)
		for _, x := range ents[off[e]:off[e+1]] {
			if x.a != x.b {
				dents = append(dents, entry{x.k, x.b - x.a, 0})
			}
		}
		if len(dents) > start {
			doff = append(doff, start)
		}
	}
	doff = append(doff, len(dents))
	hits := make([]int, len(runMetricNames))
	for r := range reps {
		rng := rand.New(rand.NewPCG(opts.Seed^0x5eed, uint64(r)))
		copy(sa, ta)
		copy(sb, tb)
		for d := range len(doff) - 1 {
			if rng.Uint64()&1 == 1 {
				for _, x := range dents[doff[d]:doff[d+1]] {
					sa[x.k] += x.a
					sb[x.k] -= x.a
				}
			}
		}
		ma, mb := ev.values(sa), ev.values(sb)
		for m := range runMetricNames {
			obs := math.Abs(obsB[m] - obsA[m])
			if math.Abs(mb[m]-ma[m]) >= obs-1e-12*math.Max(1, obs) {
				hits[m]++
			}
		}
	}
	var out []Quantity
	for m, name := range runMetricNames {
		if name == MetricECE && !hasConf {
			continue
		}
		d := diffs[m]
		slices.Sort(d)
		q := Quantity{Name: name, N: len(examples), MeanA: obsA[m], MeanB: obsB[m], Diff: obsB[m] - obsA[m],
			DiffLo: metrics.Percentile(d, 2.5), DiffHi: metrics.Percentile(d, 97.5), Test: test, RunLevel: true,
			P: float64(hits[m]+1) / float64(reps+1)}
		if q.Diff == 0 {
			q.P = 1
		}
		out = append(out, q)
	}
	return out
}

// exampleOf strips the rollout from a pair key ("example/rollout").
func exampleOf(key string) string {
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		return key[:i]
	}
	return key
}

// evaluator lays out an example's counts in one vector: per class TP, FP
// and FN; per confidence bin the count, summed confidence and summed
// correctness of decided rows with a confidence; decided and correct rows.
type evaluator struct {
	classes []string
	k, dim  int
}

func newEvaluator(classes []string) evaluator {
	k := len(classes)
	return evaluator{classes: classes, k: k, dim: 3*k + 3*metrics.NumBins + 2}
}

func (ev *evaluator) class(label string) int {
	i, ok := slices.BinarySearch(ev.classes, label)
	if !ok {
		return -1
	}
	return i
}

func (ev *evaluator) add(v []float64, l *Labelled) {
	k, nb := ev.k, metrics.NumBins
	g, p := ev.class(l.Gold), ev.class(l.Predicted)
	switch {
	case g >= 0 && g == p:
		v[g]++ // TP
	default:
		if p >= 0 {
			v[k+p]++ // FP
		}
		if g >= 0 {
			v[2*k+g]++ // FN
		}
	}
	if l.Predicted == "" || l.Predicted == abstain {
		return
	}
	right := 0.0
	if l.Predicted == l.Gold {
		right = 1
	}
	v[3*k+3*nb]++
	v[3*k+3*nb+1] += right
	if l.HasConfidence {
		c := metrics.ClampUnit(l.Confidence)
		b := metrics.BinOf(c)
		v[3*k+b]++
		v[3*k+nb+b] += c
		v[3*k+2*nb+b] += right
	}
}

// values: macro-F1 (classes with neither gold nor prediction in the sample
// are left out of the mean), ECE as metrics.Calibration defines it
// (count-weighted mean over bins of |accuracy − mean confidence|), and
// accuracy on decided rows (0 when none).
func (ev *evaluator) values(v []float64) [3]float64 {
	k, nb := ev.k, metrics.NumBins
	f1, used := 0.0, 0
	for c := range k {
		den := 2*v[c] + v[k+c] + v[2*k+c]
		if den == 0 {
			continue
		}
		f1 += 2 * v[c] / den
		used++
	}
	if used > 0 {
		f1 /= float64(used)
	}
	n, gap := 0.0, 0.0
	for b := range nb {
		cnt := v[3*k+b]
		if cnt == 0 {
			continue
		}
		n += cnt
		gap += math.Abs(v[3*k+2*nb+b] - v[3*k+nb+b]) // cnt·|acc − conf|
	}
	ece := 0.0
	if n > 0 {
		ece = gap / n
	}
	acc := 0.0
	if d := v[3*k+3*nb]; d > 0 {
		acc = v[3*k+3*nb+1] / d
	}
	return [3]float64{f1, ece, acc}
}
