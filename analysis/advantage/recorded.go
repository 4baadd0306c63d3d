package advantage

import (
	"cmp"
	"math"
	"slices"
)

// Candidate is one trainer setting whose advantages svbench recomputes to
// explain the advantages a trainer recorded.
type Candidate struct {
	// Name is scheme@convention: grpo_std@verl.
	Name string `json:"name"`
	// Setting is the trainer option that selects it.
	Setting    string `json:"setting"`
	convention Convention
	kind       kind
}

// Candidates lists every trainer setting `svbench advantages` tries, in
// report order. grpo@trl, grpo@verl and grpo@openrlhf agree except on
// one-rollout groups and unscored rewards; the grpo_std ones differ in std
// and ε as well.
var Candidates = []Candidate{
	{Name: GRPOStd + "@trl", Setting: `TRL GRPOTrainer scale_rewards="group" (default)`, convention: TRL, kind: kGRPOStd},
	{Name: GRPOBatchStd + "@trl", Setting: `TRL GRPOTrainer scale_rewards="batch"`, convention: TRL, kind: kGRPOBatchStd},
	{Name: GRPO + "@trl", Setting: `TRL GRPOTrainer scale_rewards="none"`, convention: TRL, kind: kGRPO},
	{Name: GDPO + "@trl", Setting: `TRL GRPOTrainer multi_objective_aggregation="normalize_then_sum"`, convention: TRL, kind: kGDPO},
	{Name: GRPOStd + "@verl", Setting: "verl algorithm.adv_estimator=grpo (norm_adv_by_std_in_grpo=True, default)", convention: Verl, kind: kGRPOStd},
	{Name: GRPO + "@verl", Setting: "verl algorithm.adv_estimator=grpo, norm_adv_by_std_in_grpo=False", convention: Verl, kind: kGRPO},
	{Name: GRPOStd + "@openrlhf", Setting: "OpenRLHF advantage_estimator=group_norm", convention: OpenRLHF, kind: kGRPOStd},
	{Name: GRPO + "@openrlhf", Setting: "OpenRLHF advantage_estimator=dr_grpo", convention: OpenRLHF, kind: kGRPO},
}

// CandidateAdvantages recomputes a candidate's advantage for every rollout
// of in (out[g][i]); NaN where the trainer gives none (a group OpenRLHF
// refuses, a NaN reward under verl).
func CandidateAdvantages(in *Input, name string) ([][]float64, bool) {
	for _, c := range Candidates {
		if c.Name == name {
			return c.convention.advantagesAs(in)[c.kind], true
		}
	}
	return nil, false
}

// RecordedReport says which trainer setting reproduces the trainer's
// advantages.
type RecordedReport struct {
	Rollouts int `json:"rollouts"`
	// Candidates are the settings tried, in report order.
	Candidates []Candidate `json:"candidates"`
	// MaxAbsDiff is, per candidate, the largest |recorded − recomputed|
	// over the rollouts it defines.
	MaxAbsDiff map[string]float64 `json:"max_abs_diff"`
	// Undefined counts, per candidate, recorded rollouts it gives no
	// advantage (a one-rollout group under OpenRLHF, a NaN reward under
	// verl): such a candidate cannot have produced the rows.
	Undefined map[string]int `json:"undefined,omitempty"`
	// Reproduces lists the candidates within tolerance on every recorded
	// rollout, closest first; several mean the rows do not tell those
	// trainers apart.
	Reproduces []string `json:"reproduced_by"`
	// Tolerance bounds |recorded − recomputed| by Tolerance·max(1,
	// |recorded|).
	Tolerance float64 `json:"tolerance"`
}

// RecordedTolerance is relative for advantages beyond 1: trainers compute
// in float32 (about 1e-7 relative per operation) and log the result, and
// TRL's ε (1e-4) must stay distinguishable from verl's (1e-6) on groups
// whose std is not large.
const RecordedTolerance = 1e-5

// recordedAcc gathers the comparison group by group.
type recordedAcc struct {
	rollouts  int
	maxDiff   []float64
	undefined []int
	outside   []bool
}

func newRecordedAcc() *recordedAcc {
	return &recordedAcc{maxDiff: make([]float64, len(Candidates)), undefined: make([]int, len(Candidates)), outside: make([]bool, len(Candidates))}
}

// add compares one group's recorded advantages with every candidate; trl
// are its advantages under TRL (already computed by the caller).
func (a *recordedAcc) add(g Group, w []float64, components int, trl *[numKinds][]float64) {
	recorded := false
	for _, r := range g.Rollouts {
		recorded = recorded || r.Recorded != nil
	}
	if !recorded {
		return
	}
	// Groups of verl and OpenRLHF need no batch statistics.
	other := map[string]*[numKinds][]float64{TRL.Name: trl}
	for _, c := range []Convention{Verl, OpenRLHF} {
		var buf [numKinds][]float64
		c.groupAdvantages(g, w, c.zScores(g, components), batchMoments{}, &buf)
		other[c.Name] = &buf
	}
	for i, r := range g.Rollouts {
		if r.Recorded == nil {
			continue
		}
		a.rollouts++
		for ci, c := range Candidates {
			v := other[c.convention.Name][c.kind][i]
			if math.IsNaN(v) {
				a.undefined[ci]++
				continue
			}
			d := math.Abs(v - *r.Recorded)
			a.maxDiff[ci] = math.Max(a.maxDiff[ci], d)
			if d > RecordedTolerance*math.Max(1, math.Abs(*r.Recorded)) {
				a.outside[ci] = true
			}
		}
	}
}

func (a *recordedAcc) report() *RecordedReport {
	if a.rollouts == 0 {
		return nil
	}
	rr := &RecordedReport{Rollouts: a.rollouts, Candidates: Candidates, MaxAbsDiff: map[string]float64{}, Tolerance: RecordedTolerance}
	var ok []int
	for ci, c := range Candidates {
		rr.MaxAbsDiff[c.Name] = a.maxDiff[ci]
		if a.undefined[ci] > 0 {
			if rr.Undefined == nil {
				rr.Undefined = map[string]int{}
			}
			rr.Undefined[c.Name] = a.undefined[ci]
		}
		if a.undefined[ci] == 0 && !a.outside[ci] {
			ok = append(ok, ci)
		}
	}
	slices.SortStableFunc(ok, func(x, y int) int { return cmp.Compare(a.maxDiff[x], a.maxDiff[y]) })
	for _, ci := range ok {
		rr.Reproduces = append(rr.Reproduces, Candidates[ci].Name)
	}
	return rr
}
