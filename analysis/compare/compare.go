// Package compare says whether the difference between two runs on the same
// examples is real: rows are paired by (example, rollout), and every
// per-row quantity (reward, each reward component, solved) gets its mean
// difference, a paired bootstrap 95% interval, a p-value, an effect size
// and, for pass/fail quantities, McNemar's exact test.
package compare

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/svbench/svbench/metrics"
)

// Row is one rollout's per-row quantities.
type Row struct {
	Key    string
	Values map[string]float64
	// Slices maps a breakdown field (difficulty, scenario, cwe, …) to the
	// row's value.
	Slices map[string]string
	// Label is set for classification rows (a gold label and a parsed
	// predicted label), which run-level metrics (F1, ECE) read.
	Label *Labelled
}

// Defaults of Options, which `svbench compare`'s flags show: every caller
// that leaves a field zero (the dashboard among them) gets the CLI's
// numbers, so one pair of runs has one p-value wherever it is shown.
const (
	DefaultReps = 2000
	DefaultSeed = 1
)

// Options tune the statistics and say what Runs accepts.
type Options struct {
	Reps int    // bootstrap resamples (default DefaultReps)
	Seed uint64 // bootstrap and permutation seed (default DefaultSeed)
	// PermutationBudget bounds rows × resamples of the exact sign-flip
	// permutation test; above it the paired t-test is used.
	PermutationBudget int
	// AllowUnpaired compares the shared pairs of runs that are not fully
	// paired; AllowMismatch compares runs whose budgets differ. Both are
	// refused by default, by every caller.
	AllowUnpaired, AllowMismatch bool
}

func (o Options) withDefaults() Options {
	if o.Reps <= 0 {
		o.Reps = DefaultReps
	}
	if o.Seed == 0 {
		o.Seed = DefaultSeed
	}
	if o.PermutationBudget <= 0 {
		o.PermutationBudget = 50_000_000
	}
	return o
}

// Quantity is the comparison of one per-row quantity.
type Quantity struct {
	Name   string  `json:"name"`
	N      int     `json:"n"`
	MeanA  float64 `json:"mean_a"`
	MeanB  float64 `json:"mean_b"`
	Diff   float64 `json:"diff"`
	DiffLo float64 `json:"diff_ci_lo"`
	DiffHi float64 `json:"diff_ci_hi"`
	P      float64 `json:"p_value"`
	// Test names how P was computed: "sign-flip permutation" or "paired t".
	Test string `json:"test"`
	// EffectSize is Cohen's d for paired samples (mean diff / sd of
	// diffs); nil when undefined (fewer than two pairs, or every difference
	// equal).
	EffectSize *float64 `json:"effect_size_dz"`
	// McNemar is set for pass/fail quantities (all values 0 or 1).
	McNemar *McNemar `json:"mcnemar,omitempty"`
	// PAdjusted is P adjusted for multiplicity (Holm, over a family of
	// tests such as every slice of a comparison); nil for a single test.
	PAdjusted *float64 `json:"p_holm,omitempty"`
	// RunLevel marks a metric of the whole run (F1, ECE): MeanA and MeanB
	// are its values, N counts examples, and the interval comes from
	// resampling examples.
	RunLevel bool `json:"run_level,omitempty"`
}

// McNemar is the exact test on discordant pairs.
type McNemar struct {
	OnlyA int     `json:"pass_a_fail_b"`
	OnlyB int     `json:"fail_a_pass_b"`
	P     float64 `json:"p_value"`
}

// Significant reports whether the 95% interval excludes 0.
func (q Quantity) Significant() bool { return q.DiffLo > 0 || q.DiffHi < 0 }

// Degenerate reports an interval of no width: every resample gave the same
// mean (all differences equal, or too few to vary), which says nothing
// about the spread a new sample would show.
func (q Quantity) Degenerate() bool { return !(q.DiffLo < q.DiffHi) }

// Bold says whether a report highlights the difference: the interval
// excludes 0 and has width, and the p-value (adjusted, when the test is
// one of a family) is under Alpha. Every report and the dashboard use it.
func (q Quantity) Bold() bool {
	return q.Significant() && !q.Degenerate() && q.AdjustedP() < Alpha
}

// AdjustedP is PAdjusted when the test is one of a family, else P.
func (q Quantity) AdjustedP() float64 {
	if q.PAdjusted != nil {
		return *q.PAdjusted
	}
	return q.P
}

// Pairs holds matched rows of A and B.
type Pairs struct {
	A, B []Row
	// OnlyA and OnlyB count rows without a partner.
	OnlyA, OnlyB int
}

// Pair matches rows by key. Rows with a key the other side lacks are
// counted, not compared.
func Pair(a, b []Row) Pairs {
	idx := make(map[string]int, len(b))
	for i, r := range b {
		idx[r.Key] = i
	}
	var p Pairs
	used := make([]bool, len(b))
	for _, r := range a {
		j, ok := idx[r.Key]
		if !ok {
			p.OnlyA++
			continue
		}
		used[j] = true
		p.A = append(p.A, r)
		p.B = append(p.B, b[j])
	}
	for _, u := range used {
		if !u {
			p.OnlyB++
		}
	}
	return p
}

// Quantities compares every quantity present in both sides of each pair.
func Quantities(p Pairs, names []string, opts Options) []Quantity {
	opts = opts.withDefaults()
	var out []Quantity
	for _, name := range names {
		var a, b []float64
		for i := range p.A {
			va, okA := p.A[i].Values[name]
			vb, okB := p.B[i].Values[name]
			if okA && okB {
				a = append(a, va)
				b = append(b, vb)
			}
		}
		if len(a) == 0 {
			continue
		}
		out = append(out, Compare(name, a, b, opts))
	}
	return out
}

// Compare compares paired samples a and b (B minus A).
func Compare(name string, a, b []float64, opts Options) Quantity {
	opts = opts.withDefaults()
	n := len(a)
	d := make([]float64, n)
	for i := range a {
		d[i] = b[i] - a[i]
	}
	q := Quantity{Name: name, N: n, MeanA: stat.Mean(a, nil), MeanB: stat.Mean(b, nil), Diff: stat.Mean(d, nil)}
	mean := func(idx []int) float64 {
		s := 0.0
		for _, i := range idx {
			s += d[i]
		}
		return s / float64(len(idx))
	}
	ci := metrics.Bootstrap(n, mean, opts.Reps, opts.Seed)
	q.DiffLo, q.DiffHi = ci.Lo, ci.Hi
	sd := stat.StdDev(d, nil)
	if n > 1 && sd > 0 {
		es := q.Diff / sd
		q.EffectSize = &es
	}
	if n*opts.Reps <= opts.PermutationBudget {
		q.P, q.Test = signFlip(d, opts.Reps, opts.Seed), "sign-flip permutation"
	} else {
		q.P, q.Test = pairedT(d), "paired t"
	}
	if binary(a) && binary(b) {
		q.McNemar = mcnemar(a, b)
	}
	return q
}

// signFlip is the paired permutation test: under H0 each difference's sign
// is a coin flip. The p-value counts the observed resample (Phipson–Smyth),
// so it is never 0.
func signFlip(d []float64, reps int, seed uint64) float64 {
	obs := math.Abs(sum(d))
	if obs == 0 {
		return 1
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	hits := 0
	for range reps {
		s := 0.0
		for _, x := range d {
			if rng.Uint64()&1 == 1 {
				s += x
			} else {
				s -= x
			}
		}
		if math.Abs(s) >= obs-1e-12*math.Max(1, obs) {
			hits++
		}
	}
	return float64(hits+1) / float64(reps+1)
}

func pairedT(d []float64) float64 {
	n := float64(len(d))
	sd := stat.StdDev(d, nil)
	m := stat.Mean(d, nil)
	if len(d) < 2 || sd == 0 {
		if m == 0 {
			return 1
		}
		return 0
	}
	t := m / (sd / math.Sqrt(n))
	dist := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}
	return 2 * dist.Survival(math.Abs(t))
}

func binary(xs []float64) bool {
	for _, x := range xs {
		if x != 0 && x != 1 {
			return false
		}
	}
	return true
}

// mcnemar is the exact two-sided binomial test on the discordant pairs.
func mcnemar(a, b []float64) *McNemar {
	m := &McNemar{}
	for i := range a {
		switch {
		case a[i] == 1 && b[i] == 0:
			m.OnlyA++
		case a[i] == 0 && b[i] == 1:
			m.OnlyB++
		}
	}
	n := m.OnlyA + m.OnlyB
	if n == 0 {
		m.P = 1
		return m
	}
	k := float64(min(m.OnlyA, m.OnlyB))
	bin := distuv.Binomial{N: float64(n), P: 0.5}
	m.P = math.Min(1, 2*bin.CDF(k))
	return m
}

func sum(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s
}

// MinSliceN is the fewest pairs a slice needs to be tested. Below it a
// bootstrap interval is little more than the few differences themselves
// (n = 2 gives a degenerate one) and a p-value cannot get small, so such a
// slice is listed with its n and nothing else.
const MinSliceN = 10

// Alpha is the level at which a difference is shown as significant.
const Alpha = 0.05

// Slice is a quantity compared within one value of a breakdown field.
type Slice struct {
	Field string `json:"field"`
	Value string `json:"value"`
	// N counts the slice's pairs; Quantity is empty when N < MinSliceN.
	N        int        `json:"n"`
	Quantity []Quantity `json:"quantities"`
}

// Tested says whether the slice had enough pairs to be compared.
func (s Slice) Tested() bool { return s.N >= MinSliceN }

// Slices compares quantities within each value of each breakdown field
// that has at least MinSliceN pairs. With some 40 slices, a few p-values
// under 0.05 are expected by chance alone, so each quantity's p-values are
// adjusted over every tested slice of every field together (Holm's
// step-down method, which controls the family-wise error rate without
// assuming independence) into PAdjusted, and Bold reads that.
func Slices(p Pairs, fields, names []string, opts Options) []Slice {
	var out []Slice
	for _, f := range fields {
		groups := map[string][]int{}
		for i, r := range p.A {
			if v, ok := r.Slices[f]; ok {
				groups[v] = append(groups[v], i)
			}
		}
		for _, v := range slices.Sorted(maps.Keys(groups)) {
			s := Slice{Field: f, Value: v, N: len(groups[v])}
			if s.Tested() {
				sub := Pairs{}
				for _, i := range groups[v] {
					sub.A = append(sub.A, p.A[i])
					sub.B = append(sub.B, p.B[i])
				}
				s.Quantity = Quantities(sub, names, opts)
			}
			out = append(out, s)
		}
	}
	// One family per quantity name.
	family := map[string][]*Quantity{}
	for i := range out {
		for j := range out[i].Quantity {
			q := &out[i].Quantity[j]
			family[q.Name] = append(family[q.Name], q)
		}
	}
	for _, qs := range family {
		holm(qs)
	}
	return out
}

// holm sets each quantity's Holm-adjusted p-value: sorted ascending, the
// k-th smallest of m is multiplied by m−k+1, kept monotone and capped at 1.
func holm(qs []*Quantity) {
	order := slices.Clone(qs)
	slices.SortStableFunc(order, func(a, b *Quantity) int { return cmp.Compare(a.P, b.P) })
	m, running := len(order), 0.0
	for k, q := range order {
		adj := math.Min(1, float64(m-k)*q.P)
		running = math.Max(running, adj)
		v := running
		q.PAdjusted = &v
	}
}

// Mismatch names a budget or setting two runs must share to be compared.
type Mismatch struct {
	Field string `json:"field"`
	A, B  string
}

func (m Mismatch) String() string { return fmt.Sprintf("%s: %s vs %s", m.Field, m.A, m.B) }
