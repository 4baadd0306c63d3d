// Package advantage computes group-relative advantages from multi-component
// rewards exactly as trainers compute them, and measures what each scheme
// does to the signal: how many groups have no variance (in the summed reward
// and per component), how many collapse to zero advantage, which component
// decides the sign, how each scheme's advantage ranks against each
// component, and how sensitive it is to the reward weights.
//
// Schemes, for a group of G rollouts of one prompt with components c_ik and
// weights w_k (r_i = Σ_k w_k c_ik):
//
//   - grpo:           A_i = r_i − mean(r)
//   - grpo_std:       A_i = (r_i − mean(r)) / (std(r) + ε)
//   - grpo_batch_std: A_i = (r_i − mean(r)) / (std over the batch of r + ε)
//   - per_component:  A_i = Σ_k w_k (c_ik − mean_k) / (std_k + ε)
//   - gdpo:           per_component, then standardised over the batch
//     (GDPO's decoupled group normalisation followed by batch normalisation)
//
// A recorded advantage is explained only by the exact rule that made it, and
// the trainers differ in std, ε, unscored rewards and one-rollout groups
// (each checked against the trainer's source; see the README):
//
//   - trl: GRPOTrainer. nanmean and nanstd (Bessel-corrected, n−1), ε = 1e-4.
//     A reward function returning None is NaN: it drops out of the means and
//     stds, a rollout every function left unscored gets advantage 0, and a
//     group with fewer than two scored rollouts gets 0 (nanstd is NaN there
//     and nan_to_num zeroes it). scale_rewards "none", "group", "batch" are
//     grpo, grpo_std, grpo_batch_std; multi_objective_aggregation
//     "normalize_then_sum" is gdpo, its batch being the generation batch.
//   - verl: compute_grpo_outcome_advantage. torch.std (Bessel), ε = 1e-6; a
//     one-rollout group gets mean 0 and std 1, so A = r/(1+ε) (A = r without
//     norm_adv_by_std_in_grpo). A NaN reward poisons its group.
//   - openrlhf: advantage_estimator group_norm, torch.std (Bessel), ε = 1e-9
//     (dr_grpo is grpo); one-rollout groups are refused.
//   - population: the population std with ε = 1e-6, no trainer's rule; what
//     the reward server's /v1/score returns (Advantages, ComponentScores).
//
// The analysis figures are computed under trl, the one trainer that
// implements every scheme (per_component is its normalize_then_sum before
// the batch step).
package advantage

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat"

	"github.com/svbench/svbench/metrics"
)

// Scheme names, in report order.
const (
	GRPO         = "grpo"
	GRPOStd      = "grpo_std"
	GRPOBatchStd = "grpo_batch_std"
	PerComponent = "per_component"
	GDPO         = "gdpo"
)

// Schemes lists the schemes the analysis figures and the reward server
// report.
var Schemes = []string{GRPO, GRPOStd, PerComponent, GDPO}

// kind indexes a scheme's advantages in a group's computation.
type kind int

const (
	kGRPO kind = iota
	kGRPOStd
	kGRPOBatchStd
	kPerComponent
	kGDPO
	numKinds
)

var schemeKind = map[string]kind{GRPO: kGRPO, GRPOStd: kGRPOStd, GRPOBatchStd: kGRPOBatchStd, PerComponent: kPerComponent, GDPO: kGDPO}

// Singleton is what a convention gives a group of one rollout.
type Singleton int

const (
	// SingletonZero: no relative signal, advantage 0 (trl, population).
	SingletonZero Singleton = iota
	// SingletonRaw: mean 0 and std 1 stand in for the group's (verl), so
	// the advantage is the reward itself, divided by 1+ε when scaled.
	SingletonRaw
	// SingletonRefused: the trainer refuses such groups (openrlhf); the
	// advantage is undefined (NaN).
	SingletonRefused
)

// Convention is one trainer's arithmetic for group statistics.
type Convention struct {
	Name string
	// Eps is added to the std before dividing.
	Eps float64
	// Sample selects the Bessel-corrected std (n−1), as torch.std and
	// TRL's nanstd compute it; false is the population std (n).
	Sample bool
	// NaNAware leaves unscored values out of means and stds and turns a
	// NaN advantage into 0 (TRL's nanmean, nanstd, nan_to_num); otherwise
	// one NaN makes its group's advantages NaN, as torch.mean does.
	NaNAware  bool
	Singleton Singleton
}

// The conventions svbench reproduces.
var (
	TRL        = Convention{Name: "trl", Eps: 1e-4, Sample: true, NaNAware: true, Singleton: SingletonZero}
	Verl       = Convention{Name: "verl", Eps: 1e-6, Sample: true, Singleton: SingletonRaw}
	OpenRLHF   = Convention{Name: "openrlhf", Eps: 1e-9, Sample: true, Singleton: SingletonRefused}
	Population = Convention{Name: "population", Eps: 1e-6, NaNAware: true, Singleton: SingletonZero}
)

// Rollout is one scored rollout of a group.
type Rollout struct {
	// Components are the reward components, in the order of Input.Names;
	// NaN is a component the trainer did not score (a reward function that
	// returned None), and a rollout whose components are all NaN is
	// unscored.
	Components []float64
	// Recorded is the advantage the trainer logged, when it did.
	Recorded *float64
}

// Group is the rollouts of one prompt (at one training step).
type Group struct {
	Key string
	// Batch names the batch the group was normalised with (the training
	// step of a trainer's rows; "" puts every group in one batch): TRL's
	// scale_rewards="batch" and GDPO standardise over it.
	Batch    string
	Rollouts []Rollout
}

// Input is a batch of groups sharing component names and weights.
type Input struct {
	Names   []string
	Weights []float64
	Groups  []Group
}

// Validate checks shapes and values, naming the first fault. NaN is allowed
// (an unscored component); an infinity is not.
func (in *Input) Validate() error {
	if err := checkShape(in.Names, in.Weights); err != nil {
		return err
	}
	for _, g := range in.Groups {
		if err := checkGroup(g, in.Names); err != nil {
			return err
		}
	}
	return nil
}

func checkShape(names []string, weights []float64) error {
	if len(names) == 0 {
		return fmt.Errorf("no reward components: the rows carry no components to normalise")
	}
	if len(weights) != len(names) {
		return fmt.Errorf("%d weights for %d components: give one weight per component (%v)", len(weights), len(names), names)
	}
	for k, w := range weights {
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return fmt.Errorf("weight of component %s is %v: weights must be finite", names[k], w)
		}
	}
	return nil
}

func checkGroup(g Group, names []string) error {
	for j, r := range g.Rollouts {
		if len(r.Components) != len(names) {
			return fmt.Errorf("group %s rollout %d: %d components, want %d (%v)", g.Key, j, len(r.Components), len(names), names)
		}
		for k, v := range r.Components {
			if math.IsInf(v, 0) {
				return fmt.Errorf("group %s rollout %d: component %s is %v: a reward must be finite (NaN marks an unscored one)", g.Key, j, names[k], v)
			}
		}
	}
	return nil
}

// moments is the mean and std of xs under c, and how many values counted.
// NaN values are left out when c is NaN-aware and make both NaN otherwise.
// The sample std of fewer than two values is NaN (Bessel's correction
// divides by zero; TRL's nanstd returns NaN there). A spread below 1e-12 of
// the values' scale counts as 0: float noise, not signal.
func (c Convention) moments(xs []float64) (mean, std float64, n int) {
	for _, x := range xs {
		if math.IsNaN(x) {
			if !c.NaNAware {
				return math.NaN(), math.NaN(), 0
			}
			continue
		}
		mean += x
		n++
	}
	if n == 0 {
		return math.NaN(), math.NaN(), 0
	}
	mean /= float64(n)
	sq, scale := 0.0, 0.0
	for _, x := range xs {
		if !math.IsNaN(x) {
			sq += (x - mean) * (x - mean)
			scale = math.Max(scale, math.Abs(x))
		}
	}
	return mean, c.spread(sq, scale, n), n
}

// spread turns a sum of squared deviations of n values into c's std.
func (c Convention) spread(sq, scale float64, n int) float64 {
	d := float64(n)
	if c.Sample {
		d--
	}
	if d <= 0 {
		return math.NaN()
	}
	std := math.Sqrt(sq / d)
	if std <= 1e-12*math.Max(1, scale) {
		return 0
	}
	return std
}

// scale is (x − mean)/(std + ε): 0 for a zero std (every deviation is 0
// then; trainers divide an exact 0 by ε), NaN where x or std is.
func (c Convention) scale(x, mean, std float64) float64 {
	switch {
	case math.IsNaN(x) || math.IsNaN(std) || math.IsNaN(mean):
		return math.NaN()
	case std == 0:
		return 0
	}
	return (x - mean) / (std + c.Eps)
}

// finish applies TRL's nan_to_num to a NaN-aware convention's advantage.
func (c Convention) finish(v float64) float64 {
	if c.NaNAware && math.IsNaN(v) {
		return 0
	}
	return v
}

// reward is Σ_k w_k c_k over scored components (TRL's nansum), NaN when no
// component is scored.
func reward(w, c []float64) float64 {
	s, any := 0.0, false
	for k := range w {
		if !math.IsNaN(c[k]) {
			s += w[k] * c[k]
			any = true
		}
	}
	if !any {
		return math.NaN()
	}
	return s
}

// decoupled is Σ_k w_k z_k over defined z (TRL sums the per-component
// advantages with nansum), NaN for an unscored rollout (TRL sets it so).
func decoupled(w, z, c []float64) float64 {
	s, scored := 0.0, false
	for k := range w {
		if !math.IsNaN(c[k]) {
			scored = true
		}
		if !math.IsNaN(z[k]) {
			s += w[k] * z[k]
		}
	}
	if !scored {
		return math.NaN()
	}
	return s
}

// zScores standardises each component within the group under c:
// z[i][k] = (c_ik − mean_k)/(std_k + ε), NaN where c_ik is unscored or the
// component's std is undefined (fewer than two scored values).
func (c Convention) zScores(g Group, components int) [][]float64 {
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
		mk, sk, _ := c.moments(col)
		for i := range z {
			z[i][k] = c.scale(col[i], mk, sk)
		}
	}
	return z
}

// batchMoments are the statistics a batch-level scheme divides by: the
// summed rewards' std (grpo_batch_std) and the decoupled sums' mean and std
// (gdpo), over every scored rollout of the batch, one-rollout groups
// included (TRL's batch holds them).
type batchMoments struct {
	rewardStd       float64
	perMean, perStd float64
}

// batchAcc accumulates batchMoments in two passes (means, then squared
// deviations), in group order, so every caller gets the same figures.
type batchAcc struct {
	n              [2]int
	sum, sq, scale [2]float64
	mean           [2]float64
}

// values is what a group adds to its batch: per rollout the summed reward
// and the decoupled sum under c and w.
func (c Convention) batchValues(g Group, w []float64, z [][]float64) (r, per []float64) {
	r = make([]float64, len(g.Rollouts))
	per = make([]float64, len(g.Rollouts))
	for i, ro := range g.Rollouts {
		r[i] = reward(w, ro.Components)
		per[i] = decoupled(w, z[i], ro.Components)
	}
	return r, per
}

func (a *batchAcc) addSum(r, per []float64) {
	for j, xs := range [2][]float64{r, per} {
		for _, x := range xs {
			if !math.IsNaN(x) {
				a.sum[j] += x
				a.n[j]++
			}
		}
	}
}

func (a *batchAcc) closeSums() {
	for j := range 2 {
		if a.n[j] > 0 {
			a.mean[j] = a.sum[j] / float64(a.n[j])
		}
	}
}

func (a *batchAcc) addSq(r, per []float64) {
	for j, xs := range [2][]float64{r, per} {
		for _, x := range xs {
			if !math.IsNaN(x) {
				a.sq[j] += (x - a.mean[j]) * (x - a.mean[j])
				a.scale[j] = math.Max(a.scale[j], math.Abs(x))
			}
		}
	}
}

func (a *batchAcc) moments(c Convention) batchMoments {
	m := batchMoments{rewardStd: c.spread(a.sq[0], a.scale[0], a.n[0]), perMean: a.mean[1], perStd: c.spread(a.sq[1], a.scale[1], a.n[1])}
	if a.n[1] == 0 {
		m.perMean = math.NaN()
	}
	return m
}

// groupAdvantages fills out[kind] with the group's advantages under c, w
// and its batch's moments; z are the group's zScores under c. out's slices
// are reused when they have room.
func (c Convention) groupAdvantages(g Group, w []float64, z [][]float64, b batchMoments, out *[numKinds][]float64) {
	n := len(g.Rollouts)
	for k := range out {
		if cap(out[k]) < n {
			out[k] = make([]float64, n)
		}
		out[k] = out[k][:n]
	}
	r := make([]float64, n)
	for i, ro := range g.Rollouts {
		r[i] = reward(w, ro.Components)
	}
	if n == 1 && c.Singleton != SingletonZero {
		for k := range out {
			out[k][0] = math.NaN()
		}
		if c.Singleton == SingletonRaw {
			// verl: mean 0, std 1 for a group of one.
			out[kGRPO][0] = r[0]
			out[kGRPOStd][0] = r[0] / (1 + c.Eps)
		}
		return
	}
	m, sd, _ := c.moments(r)
	for i, ro := range g.Rollouts {
		out[kGRPO][i] = c.finish(r[i] - m)
		out[kGRPOStd][i] = c.finish(c.scale(r[i], m, sd))
		out[kGRPOBatchStd][i] = c.finish(c.scale(r[i], m, b.rewardStd))
		per := decoupled(w, z[i], ro.Components)
		out[kPerComponent][i] = c.finish(per)
		out[kGDPO][i] = c.finish(c.scale(per, b.perMean, b.perStd))
	}
}

// batches computes every batch's moments under c and w, in memory.
func (c Convention) batches(groups []Group, w []float64, components int) map[string]batchMoments {
	acc := map[string]*batchAcc{}
	vals := make([][2][]float64, len(groups))
	for gi, g := range groups {
		r, per := c.batchValues(g, w, c.zScores(g, components))
		vals[gi] = [2][]float64{r, per}
		if acc[g.Batch] == nil {
			acc[g.Batch] = &batchAcc{}
		}
		acc[g.Batch].addSum(r, per)
	}
	for _, a := range acc {
		a.closeSums()
	}
	for gi, g := range groups {
		acc[g.Batch].addSq(vals[gi][0], vals[gi][1])
	}
	out := map[string]batchMoments{}
	for b, a := range acc {
		out[b] = a.moments(c)
	}
	return out
}

// advantagesAs computes every kind's advantage under c: out[kind][g][i].
func (c Convention) advantagesAs(in *Input) [numKinds][][]float64 {
	var out [numKinds][][]float64
	for k := range out {
		out[k] = make([][]float64, len(in.Groups))
	}
	bm := c.batches(in.Groups, in.Weights, len(in.Names))
	for gi, g := range in.Groups {
		var buf [numKinds][]float64
		c.groupAdvantages(g, in.Weights, c.zScores(g, len(in.Names)), bm[g.Batch], &buf)
		for k := range out {
			out[k][gi] = buf[k]
		}
	}
	return out
}

// Advantages computes every scheme's advantage for every rollout under the
// population convention (what /v1/score returns): out[s][g][i].
func Advantages(in *Input) map[string][][]float64 {
	all := Population.advantagesAs(in)
	out := map[string][][]float64{}
	for _, s := range Schemes {
		out[s] = all[schemeKind[s]]
	}
	return out
}

// ComponentScores standardises each component within the group under the
// population convention: z[i][k] = (c_ik − mean_k) / (std_k + ε), 0 for a
// constant or unscored component. These are the decoupled, per-reward
// advantages GDPO sums.
func ComponentScores(g Group, components int) [][]float64 {
	z := Population.zScores(g, components)
	for _, zi := range z {
		for k, v := range zi {
			if math.IsNaN(v) {
				zi[k] = 0
			}
		}
	}
	return z
}

// Report is what `svbench advantages` prints.
type Report struct {
	Groups   int       `json:"groups"`
	Rollouts int       `json:"rollouts"`
	Names    []string  `json:"components"`
	Weights  []float64 `json:"weights"`
	// Convention names the arithmetic of every figure but Recorded.
	Convention string `json:"convention"`
	// Singletons are groups of one rollout: no relative signal under any
	// scheme; they are counted here and left out of every other figure but
	// the batch statistics (a trainer's batch holds them) and Recorded.
	Singletons int `json:"singleton_groups"`
	// Unscored counts rollouts every component left unscored (NaN).
	Unscored     int                     `json:"unscored_rollouts,omitempty"`
	ZeroVariance ZeroVarianceReport      `json:"zero_variance"`
	Schemes      map[string]SchemeReport `json:"schemes"`
	// Deciders counts, over rollouts with a non-zero GRPO advantage, the
	// component whose weighted deviation from the group mean agrees in
	// sign with the advantage and is largest: the component that decided
	// whether the rollout was pushed up or down.
	Deciders map[string]int `json:"sign_decided_by"`
	// Recorded compares the trainer's logged advantage with each trainer
	// convention.
	Recorded *RecordedReport `json:"recorded,omitempty"`
}

// ZeroVarianceReport is the share of groups (of two or more rollouts) in
// which a quantity does not vary.
type ZeroVarianceReport struct {
	// Reward: the weighted sum of the components is constant.
	Reward float64 `json:"reward"`
	// Components: each component is constant.
	Components map[string]float64 `json:"components"`
	// RewardOnly: the sum is constant but some component varies. A filter
	// on the summed reward's variance (dynamic sampling, dropping TRL's
	// frac_reward_zero_std groups) drops these groups, which GDPO's
	// per-component normalisation exists to keep.
	RewardOnly float64 `json:"reward_constant_component_varies"`
}

// SchemeReport describes one scheme's advantages.
type SchemeReport struct {
	// CollapsedGroups is the share of groups whose advantages are all 0.
	CollapsedGroups float64 `json:"collapsed_group_share"`
	// Spearman is the rank correlation of the advantage with each component
	// over all rollouts that scored it; NaN-free: a constant component
	// gives 0.
	Spearman map[string]float64 `json:"spearman_with_component"`
	// Sensitivity is, per component, the share of rollouts whose advantage
	// changes sign when that component's weight moves by ±20%.
	Sensitivity map[string]float64 `json:"sign_flip_share_at_20pct_weight_change"`
}

// Analyse computes the report, in memory: the same computation as
// AnalyseStream over in's groups, so the figures are identical.
func Analyse(in *Input) (*Report, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	return AnalyseStream(in.Names, in.Weights, func(yield func(Group) error) error {
		for _, g := range in.Groups {
			if err := yield(g); err != nil {
				return err
			}
		}
		return nil
	})
}

func allZero(xs []float64) bool {
	for _, x := range xs {
		if math.Abs(x) > 1e-12 {
			return false
		}
	}
	return true
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
