// Package advantage computes group-relative advantages from multi-component
// rewards under the schemes trainers use, and measures what each scheme does
// to the signal: how many groups collapse to zero advantage, which component
// decides the sign, how each scheme's advantage ranks against each
// component, and how sensitive it is to the reward weights.
//
// Schemes, for a group of G rollouts of one prompt with components c_ik and
// weights w_k (r_i = Σ_k w_k c_ik):
//
//   - grpo:           A_i = r_i − mean(r)
//   - grpo_std:       A_i = (r_i − mean(r)) / (std(r) + ε)
//   - per_component:  A_i = Σ_k w_k (c_ik − mean_k) / (std_k + ε)
//   - gdpo:           per_component, then standardised over the whole batch
//     (GDPO's decoupled group normalisation followed by batch normalisation)
//
// std is the population standard deviation (as TRL and verl compute it); a
// zero-variance group or component contributes 0.
package advantage

import (
	"fmt"
	"math"
	"slices"

	"gonum.org/v1/gonum/stat"

	"github.com/svbench/svbench/metrics"
)

// Eps keeps normalisation finite, as trainers add it.
const Eps = 1e-6

// Scheme names, in report order.
const (
	GRPO         = "grpo"
	GRPOStd      = "grpo_std"
	PerComponent = "per_component"
	GDPO         = "gdpo"
)

// Schemes lists every scheme.
var Schemes = []string{GRPO, GRPOStd, PerComponent, GDPO}

// Rollout is one scored rollout of a group.
type Rollout struct {
	// Components are the reward components, in the order of Input.Names.
	Components []float64
	// Recorded is the advantage the trainer logged, when it did.
	Recorded *float64
}

// Group is the rollouts of one prompt (at one training step).
type Group struct {
	Key      string
	Rollouts []Rollout
}

// Input is a batch of groups sharing component names and weights.
type Input struct {
	Names   []string
	Weights []float64
	Groups  []Group
}

// Validate checks shapes and finiteness, naming the first fault.
func (in *Input) Validate() error {
	if len(in.Names) == 0 {
		return fmt.Errorf("no reward components: the rows carry no components to normalise")
	}
	if len(in.Weights) != len(in.Names) {
		return fmt.Errorf("%d weights for %d components", len(in.Weights), len(in.Names))
	}
	for _, g := range in.Groups {
		for j, r := range g.Rollouts {
			if len(r.Components) != len(in.Names) {
				return fmt.Errorf("group %s rollout %d: %d components, want %d (%v)", g.Key, j, len(r.Components), len(in.Names), in.Names)
			}
			for k, v := range r.Components {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("group %s rollout %d: component %s is %v", g.Key, j, in.Names[k], v)
				}
			}
		}
	}
	return nil
}

// Advantages computes every scheme's advantage for every rollout: out[s][g][i].
func Advantages(in *Input) map[string][][]float64 {
	out := map[string][][]float64{}
	for _, s := range Schemes {
		out[s] = make([][]float64, len(in.Groups))
	}
	for gi, g := range in.Groups {
		n := len(g.Rollouts)
		rewards := make([]float64, n)
		for i, r := range g.Rollouts {
			rewards[i] = dot(in.Weights, r.Components)
		}
		m, sd := meanStd(rewards)
		grpo := make([]float64, n)
		grpoStd := make([]float64, n)
		for i, r := range rewards {
			grpo[i] = r - m
			if sd > 0 {
				grpoStd[i] = (r - m) / (sd + Eps)
			}
		}
		per := make([]float64, n)
		for i, z := range ComponentScores(g, len(in.Names)) {
			per[i] = dot(in.Weights, z)
		}
		out[GRPO][gi], out[GRPOStd][gi], out[PerComponent][gi] = grpo, grpoStd, per
	}
	// GDPO: batch-level standardisation of the decoupled advantages.
	var all []float64
	for _, a := range out[PerComponent] {
		all = append(all, a...)
	}
	m, sd := meanStd(all)
	for gi, a := range out[PerComponent] {
		g := make([]float64, len(a))
		for i, v := range a {
			if sd > 0 {
				g[i] = (v - m) / (sd + Eps)
			}
		}
		out[GDPO][gi] = g
	}
	return out
}

// ComponentScores standardises each component within the group:
// z[i][k] = (c_ik − mean_k) / (std_k + Eps), 0 for a constant component.
// These are the decoupled, per-reward advantages GDPO sums.
func ComponentScores(g Group, components int) [][]float64 {
	n := len(g.Rollouts)
	z := make([][]float64, n)
	for i := range z {
		z[i] = make([]float64, components)
	}
	col := make([]float64, n)
	for k := range components {
		for i, r := range g.Rollouts {
			col[i] = r.Components[k]
		}
		mk, sk := meanStd(col)
		if sk == 0 {
			continue
		}
		for i := range z {
			z[i][k] = (col[i] - mk) / (sk + Eps)
		}
	}
	return z
}

func dot(w, c []float64) float64 {
	s := 0.0
	for k := range w {
		s += w[k] * c[k]
	}
	return s
}

// meanStd is the mean and population standard deviation; a spread below
// 1e-12 of the values' scale counts as zero (float noise, not signal).
func meanStd(xs []float64) (mean, std float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	scale := 0.0
	for _, x := range xs {
		d := x - mean
		std += d * d
		scale = math.Max(scale, math.Abs(x))
	}
	std = math.Sqrt(std / float64(len(xs)))
	if std <= 1e-12*math.Max(1, scale) {
		return mean, 0
	}
	return mean, std
}

// Report is what `svbench advantages` prints.
type Report struct {
	Groups   int       `json:"groups"`
	Rollouts int       `json:"rollouts"`
	Names    []string  `json:"components"`
	Weights  []float64 `json:"weights"`
	// Singletons are groups of one rollout: no relative signal under any
	// scheme; they are counted here and left out of every other figure.
	Singletons int                     `json:"singleton_groups"`
	Schemes    map[string]SchemeReport `json:"schemes"`
	// Deciders counts, over rollouts with a non-zero GRPO advantage, the
	// component whose weighted deviation from the group mean agrees in
	// sign with the advantage and is largest: the component that decided
	// whether the rollout was pushed up or down.
	Deciders map[string]int `json:"sign_decided_by"`
	// Recorded compares the trainer's logged advantage with each scheme.
	Recorded *RecordedReport `json:"recorded,omitempty"`
}

// SchemeReport describes one scheme's advantages.
type SchemeReport struct {
	// CollapsedGroups is the share of groups whose advantages are all 0.
	CollapsedGroups float64 `json:"collapsed_group_share"`
	// Spearman is the rank correlation of the advantage with each component
	// over all rollouts; NaN-free: a constant component gives 0.
	Spearman map[string]float64 `json:"spearman_with_component"`
	// Sensitivity is, per component, the share of rollouts whose advantage
	// changes sign when that component's weight moves by ±20%.
	Sensitivity map[string]float64 `json:"sign_flip_share_at_20pct_weight_change"`
}

// RecordedReport says which scheme reproduces the trainer's advantages.
type RecordedReport struct {
	Rollouts   int                `json:"rollouts"`
	MaxAbsDiff map[string]float64 `json:"max_abs_diff"`
	// Reproduces lists schemes within Tolerance on every rollout.
	Reproduces []string `json:"reproduced_by"`
	Tolerance  float64  `json:"tolerance"`
}

// RecordedTolerance: logged advantages are float32 in most trainers.
const RecordedTolerance = 1e-4

// Analyse computes the report.
func Analyse(in *Input) (*Report, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	rep := &Report{Names: in.Names, Weights: in.Weights, Schemes: map[string]SchemeReport{}, Deciders: map[string]int{}}
	multi := &Input{Names: in.Names, Weights: in.Weights}
	for _, g := range in.Groups {
		if len(g.Rollouts) < 2 {
			rep.Singletons++
			continue
		}
		multi.Groups = append(multi.Groups, g)
	}
	rep.Groups = len(multi.Groups)
	for _, g := range multi.Groups {
		rep.Rollouts += len(g.Rollouts)
	}
	if rep.Groups == 0 {
		return nil, fmt.Errorf("no group has two or more rollouts (%d singleton groups): advantages need several rollouts per prompt (eval -r > 1, or a trainer's rows with problem_id)", rep.Singletons)
	}
	adv := Advantages(multi)
	comps := make([][]float64, len(in.Names))
	for k := range in.Names {
		for _, g := range multi.Groups {
			for _, r := range g.Rollouts {
				comps[k] = append(comps[k], r.Components[k])
			}
		}
	}
	flats := map[string][]float64{}
	for _, s := range Schemes {
		var flat []float64
		for _, a := range adv[s] {
			flat = append(flat, a...)
		}
		flats[s] = flat
	}
	// Each perturbation is computed once, read by every scheme and dropped:
	// memory stays a few arrays of the batch's size, whatever the size.
	flips := map[string][][]bool{}
	for _, s := range Schemes {
		flips[s] = make([][]bool, len(in.Names))
	}
	for k := range in.Names {
		for _, s := range Schemes {
			flips[s][k] = make([]bool, len(flats[s]))
		}
		for _, f := range []float64{0.8, 1.2} {
			w := slices.Clone(in.Weights)
			w[k] *= f
			p := Advantages(&Input{Names: in.Names, Weights: w, Groups: multi.Groups})
			for _, s := range Schemes {
				markFlips(flips[s][k], flats[s], p[s])
			}
		}
	}
	// Ranks are computed once per component and per scheme.
	compRanks := make([][]float64, len(in.Names))
	for k := range in.Names {
		compRanks[k] = metrics.Ranks(comps[k])
	}
	for _, s := range Schemes {
		sr := SchemeReport{Spearman: map[string]float64{}, Sensitivity: map[string]float64{}}
		collapsed := 0
		for _, a := range adv[s] {
			if allZero(a) {
				collapsed++
			}
		}
		sr.CollapsedGroups = float64(collapsed) / float64(rep.Groups)
		advRanks := metrics.Ranks(flats[s])
		for k, name := range in.Names {
			sr.Spearman[name] = pearson(advRanks, compRanks[k])
			sr.Sensitivity[name] = flipShare(flats[s], flips[s][k])
		}
		rep.Schemes[s] = sr
	}
	for gi, g := range multi.Groups {
		means := make([]float64, len(in.Names))
		for k := range in.Names {
			for _, r := range g.Rollouts {
				means[k] += r.Components[k]
			}
			means[k] /= float64(len(g.Rollouts))
		}
		for i, r := range g.Rollouts {
			a := adv[GRPO][gi][i]
			if math.Abs(a) < 1e-12 {
				continue
			}
			best, bestV := -1, 0.0
			for k := range in.Names {
				v := in.Weights[k] * (r.Components[k] - means[k])
				if v*a > 0 && math.Abs(v) > bestV {
					best, bestV = k, math.Abs(v)
				}
			}
			if best >= 0 {
				rep.Deciders[in.Names[best]]++
			}
		}
	}
	rep.Recorded = compareRecorded(multi, adv)
	return rep, nil
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if math.Abs(x) > 1e-12 {
			return false
		}
	}
	return true
}

// markFlips marks rollouts whose advantage changed sign, or became or
// stopped being zero, between base and perturbed.
func markFlips(flipped []bool, base []float64, perturbed [][]float64) {
	i := 0
	for _, a := range perturbed {
		for _, v := range a {
			if base[i]*v < 0 || (math.Abs(base[i]) > 1e-12) != (math.Abs(v) > 1e-12) {
				flipped[i] = true
			}
			i++
		}
	}
}

// flipShare is the share of rollouts with a non-zero base advantage that
// flipped.
func flipShare(base []float64, flipped []bool) float64 {
	n, f := 0, 0
	for i, b := range base {
		if math.Abs(b) > 1e-12 {
			n++
			if flipped[i] {
				f++
			}
		}
	}
	if n == 0 {
		return 0
	}
	return float64(f) / float64(n)
}

func compareRecorded(in *Input, adv map[string][][]float64) *RecordedReport {
	rr := &RecordedReport{MaxAbsDiff: map[string]float64{}, Tolerance: RecordedTolerance}
	for gi, g := range in.Groups {
		for i, r := range g.Rollouts {
			if r.Recorded == nil {
				continue
			}
			rr.Rollouts++
			for _, s := range Schemes {
				rr.MaxAbsDiff[s] = math.Max(rr.MaxAbsDiff[s], math.Abs(adv[s][gi][i]-*r.Recorded))
			}
		}
	}
	if rr.Rollouts == 0 {
		return nil
	}
	for _, s := range Schemes {
		if rr.MaxAbsDiff[s] <= RecordedTolerance {
			rr.Reproduces = append(rr.Reproduces, s)
		}
	}
	return rr
}

// Spearman is the rank correlation of x and y (average ranks for ties);
// 0 when either is constant.
func Spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return 0
	}
	return pearson(metrics.Ranks(x), metrics.Ranks(y))
}

// pearson is gonum's correlation with a constant input mapped to 0 rather
// than NaN (no linear association can be measured, and JSON has no NaN).
func pearson(x, y []float64) float64 {
	c := stat.Correlation(x, y, nil)
	if math.IsNaN(c) {
		return 0
	}
	return c
}
