package report

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// StudyRun is one training run of a study: its identity and budget as
// recorded, its re-scored rollouts and its training curve.
type StudyRun struct {
	Name         string `json:"name"`
	RunID        string `json:"run_id"`
	RewardSource string `json:"reward_source"`
	// Budget holds the matched-budget fields (model, steps, batch, …) as
	// text; Identity the fields that name what was trained (environment id
	// and version, reward config). A missing field is "".
	Budget   map[string]string `json:"budget"`
	Identity map[string]string `json:"identity"`
	Training *TrainingSummary  `json:"-"`
	Rows     []artifact.Result `json:"-"`
	// Judge holds, per row, a judge verdict asked during the study
	// (--judge-model); nil when none was asked.
	Judge []*float64 `json:"-"`
	// Control marks the random-reward control arm: every other arm's gain
	// is compared with its gain.
	Control bool `json:"control,omitempty"`
}

// RandomSource is the reward_source a random-reward control run records.
const RandomSource = "random"

// RunQuality is the judge's verdict on one run's final rollouts measured
// against the executable verifier's solved.
type RunQuality struct {
	Run          string `json:"run"`
	RewardSource string `json:"reward_source"`
	JudgeSource  string `json:"judge_source"`
	metrics.VerdictQuality
}

// ControlGain is an arm's gain beyond the random-reward control's: the
// difference of the two runs' executable reward on their final rollouts
// (with a shared base model, final − final is gain − gain), and the
// trainer's own eval gains (after − before) when both runs recorded them.
type ControlGain struct {
	Run          string   `json:"run"`
	Control      string   `json:"control"`
	Delta        float64  `json:"delta_executable"`
	Lo           float64  `json:"ci_lo"`
	Hi           float64  `json:"ci_hi"`
	EvalGain     *float64 `json:"trainer_eval_gain,omitempty"`
	ControlGain  *float64 `json:"control_trainer_eval_gain,omitempty"`
	EvalGainDiff *float64 `json:"trainer_eval_gain_minus_control,omitempty"`
}

// BudgetFields and IdentityFields are the rows of the parity table, in
// order: the reference's matched-budget fields, then identity.
var (
	BudgetFields   = []string{"model", "steps", "batch_size", "rollouts_per_example", "max_tokens", "temperature", "lora_alpha", "learning_rate", "dataset", "seed", "env_args", "eval"}
	IdentityFields = []string{"environment", "environment_version", "reward_source", "reward_config"}
)

// Estimate is a mean with its 95% interval.
type Estimate struct {
	N     int     `json:"n"`
	Mean  float64 `json:"mean"`
	Lo    float64 `json:"ci_lo"`
	Hi    float64 `json:"ci_hi"`
	Basis string  `json:"basis,omitempty"`
}

// CrossScore is one run's final rollouts under every reward source svbench
// can apply: the reward it was trained on (recorded), the executable
// verifier (re-scored) and the judge (recorded or asked).
type CrossScore struct {
	Run           string    `json:"run"`
	RewardSource  string    `json:"reward_source"`
	Steps         []int64   `json:"rollout_steps"`
	TrainedOn     *Estimate `json:"trained_on_reward"`
	Executable    *Estimate `json:"executable_reward"`
	Solved        *Estimate `json:"executable_solved"`
	Judge         *Estimate `json:"judge_reward,omitempty"`
	JudgeSource   string    `json:"judge_source,omitempty"`
	TrainingFinal *float64  `json:"training_final_reward_smoothed,omitempty"`
	EvalBefore    *float64  `json:"trainer_eval_before,omitempty"`
	EvalAfter     *float64  `json:"trainer_eval_after,omitempty"`
}

// Gap is the difference of executable reward between a run and the
// study's executable-rewarded baseline, with a bootstrap interval.
type Gap struct {
	Run      string  `json:"run"`
	Baseline string  `json:"baseline"`
	Delta    float64 `json:"delta_executable"`
	Lo       float64 `json:"ci_lo"`
	Hi       float64 `json:"ci_hi"`
}

// Study is study.json.
type Study struct {
	Runs       []StudyRun   `json:"runs"`
	Parity     []ParityRow  `json:"parity"`
	Mismatched []string     `json:"budget_mismatches"`
	Identity   []string     `json:"identity_differences"`
	Cross      []CrossScore `json:"cross_scoring"`
	Gaps       []Gap        `json:"hacking_gap"`
	Quality    []RunQuality `json:"reward_quality"`
	// Control names the random-reward control run ("" when none was
	// given: then no gain can be attributed to a reward);
	// ControlGains compares every other arm with it.
	Control      string                  `json:"control"`
	ControlGains []ControlGain           `json:"control_comparison"`
	Curves       map[string][]CurvePoint `json:"curves"`
	Evidence     []string                `json:"evidence"`
	Bootstrap    map[string]any          `json:"bootstrap"`
}

// ParityRow is one field of the budget-parity table.
type ParityRow struct {
	Field  string   `json:"field"`
	Kind   string   `json:"kind"` // budget | identity
	Values []string `json:"values"`
	Same   bool     `json:"same"`
}

// BuildStudy compares training runs of one environment that differ in one
// setting (reward source, advantage estimator, …). Intervals are seeded
// bootstrap 95% intervals that resample problems (a trainer samples several
// rollouts of each problem, which are not independent).
func BuildStudy(runs []StudyRun, reps int, seed uint64) (*Study, []Chart, string) {
	st := &Study{Runs: runs, Curves: map[string][]CurvePoint{}, Bootstrap: map[string]any{"reps": reps, "seed": seed, "resampled": "problems (all rollouts of a resampled problem)"}}
	for _, kind := range []string{"budget", "identity"} {
		fields := BudgetFields
		if kind == "identity" {
			fields = IdentityFields
		}
		for _, f := range fields {
			row := ParityRow{Field: f, Kind: kind, Same: true}
			for i, r := range runs {
				v := r.Budget[f]
				if kind == "identity" {
					v = r.Identity[f]
				}
				row.Values = append(row.Values, v)
				if i > 0 && v != row.Values[0] {
					row.Same = false
				}
			}
			st.Parity = append(st.Parity, row)
			if !row.Same {
				if kind == "budget" {
					st.Mismatched = append(st.Mismatched, f)
				} else {
					st.Identity = append(st.Identity, f)
				}
			}
		}
	}
	baseline, control := -1, -1
	for i, r := range runs {
		cs := crossScore(r, reps, seed)
		st.Cross = append(st.Cross, cs)
		if r.Training != nil {
			st.Curves[r.Name] = r.Training.Curve
		}
		if q, ok := runQuality(r); ok {
			st.Quality = append(st.Quality, q)
		}
		if r.Control && control < 0 {
			control = i
			continue
		}
		if baseline < 0 && (r.RewardSource == "executable" || r.RewardSource == "hybrid") {
			baseline = i
		}
	}
	if control >= 0 {
		st.Control = runs[control].Name
		for i, r := range runs {
			if i == control {
				continue
			}
			d, lo, hi, ok := diffCI(execValues(r), execValues(runs[control]), reps, seed)
			if !ok {
				continue
			}
			g := ControlGain{Run: r.Name, Control: st.Control, Delta: d, Lo: lo, Hi: hi, EvalGain: evalGain(st.Cross[i]), ControlGain: evalGain(st.Cross[control])}
			if g.EvalGain != nil && g.ControlGain != nil {
				x := *g.EvalGain - *g.ControlGain
				g.EvalGainDiff = &x
			}
			st.ControlGains = append(st.ControlGains, g)
		}
	}
	if baseline >= 0 {
		for i, r := range runs {
			if i == baseline || i == control {
				continue
			}
			d, lo, hi, ok := diffCI(execValues(runs[i]), execValues(runs[baseline]), reps, seed)
			if ok {
				st.Gaps = append(st.Gaps, Gap{Run: r.Name, Baseline: runs[baseline].Name, Delta: d, Lo: lo, Hi: hi})
			}
		}
	}
	st.Evidence = evidence(st)
	charts := studyCharts(st)
	return st, charts, studyMarkdown(st, charts)
}

// rowValue is a row's value under one reward source and the problem it
// belongs to (for the cluster bootstrap).
type rowValue struct {
	problem int
	v       float64
}

func execValues(r StudyRun) []rowValue {
	var out []rowValue
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Trainer == nil || row.Trainer.Executable == nil || row.ScoreError != "" || row.Unverifiable != "" {
			continue
		}
		out = append(out, rowValue{row.Index, *row.Trainer.Executable})
	}
	return out
}

func evalGain(c CrossScore) *float64 {
	if c.EvalBefore == nil || c.EvalAfter == nil {
		return nil
	}
	g := *c.EvalAfter - *c.EvalBefore
	return &g
}

// judgeAt is row i's judge verdict: asked during the study when the study
// asked one, else the judge component the trainer recorded.
func judgeAt(r StudyRun, i int) (v float64, src string, ok bool) {
	switch {
	case i < len(r.Judge) && r.Judge[i] != nil:
		return *r.Judge[i], "asked during the study", true
	case r.Judge == nil && r.Rows[i].Trainer != nil:
		if v, ok := r.Rows[i].Trainer.Components["judge"]; ok {
			return v, "recorded by the trainer", true
		}
	}
	return 0, "", false
}

// runQuality measures the judge's yes (judge ≥ 1, as rewards agree counts
// a pass) on a run's final rollouts against the executable verifier's
// solved, over rows that have both; ok is false when none has.
func runQuality(r StudyRun) (RunQuality, bool) {
	q := RunQuality{Run: r.Name, RewardSource: r.RewardSource, VerdictQuality: metrics.VerdictQuality{Source: "llm_judge", Positive: "the judge said yes (judge component ≥ 1)"}}
	n := 0
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Solved == nil || row.ScoreError != "" || row.Unverifiable != "" {
			continue
		}
		v, src, ok := judgeAt(r, i)
		if !ok {
			continue
		}
		id := row.ExampleID
		if id == "" {
			id = fmt.Sprintf("#%d", row.Index)
		}
		q.JudgeSource = src
		q.Add(v >= 1, *row.Solved, fmt.Sprintf("%s/r%d", id, row.Rollout))
		n++
	}
	return q, n > 0
}

func crossScore(r StudyRun, reps int, seed uint64) CrossScore {
	cs := CrossScore{Run: r.Name, RewardSource: r.RewardSource}
	steps := map[int64]bool{}
	var trained, solved, judge []rowValue
	judgeSrc := ""
	for i := range r.Rows {
		row := &r.Rows[i]
		if row.Trainer == nil {
			continue
		}
		if s := row.Trainer.Step; s != nil {
			steps[*s] = true
		}
		if row.Trainer.Reward != nil {
			trained = append(trained, rowValue{row.Index, *row.Trainer.Reward})
		}
		if row.Solved != nil && row.ScoreError == "" && row.Unverifiable == "" {
			solved = append(solved, rowValue{row.Index, b01(*row.Solved)})
		}
		if v, src, ok := judgeAt(r, i); ok {
			judge = append(judge, rowValue{row.Index, v})
			judgeSrc = src
		}
	}
	cs.Steps = slices.Sorted(maps.Keys(steps))
	cs.TrainedOn = clusterMean(trained, reps, seed)
	cs.Executable = clusterMean(execValues(r), reps, seed)
	cs.Solved = clusterMean(solved, reps, seed)
	cs.Judge, cs.JudgeSource = clusterMean(judge, reps, seed), judgeSrc
	if t := r.Training; t != nil {
		f := t.FinalReward
		cs.TrainingFinal = &f
		if t.Eval != nil {
			b, a := t.Eval.Before, t.Eval.After
			cs.EvalBefore, cs.EvalAfter = &b, &a
		}
	}
	return cs
}

func b01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// clusters groups values by problem, in first-seen order.
func clusters(vs []rowValue) [][]float64 {
	idx := map[int]int{}
	var out [][]float64
	for _, v := range vs {
		k, ok := idx[v.problem]
		if !ok {
			k = len(out)
			idx[v.problem] = k
			out = append(out, nil)
		}
		out[k] = append(out[k], v.v)
	}
	return out
}

// clusterMean is the mean of vs with a bootstrap 95% interval resampling
// problems; nil for no values.
func clusterMean(vs []rowValue, reps int, seed uint64) *Estimate {
	if len(vs) == 0 {
		return nil
	}
	cl := clusters(vs)
	stat := func(sample []int) float64 {
		s, n := 0.0, 0
		for _, c := range sample {
			for _, v := range cl[c] {
				s += v
				n++
			}
		}
		return s / float64(n)
	}
	ci := metrics.Bootstrap(len(cl), stat, reps, seed)
	return &Estimate{N: len(vs), Mean: ci.Point, Lo: ci.Lo, Hi: ci.Hi, Basis: fmt.Sprintf("%d rollouts of %d problems", len(vs), len(cl))}
}

// diffCI is mean(a) − mean(b) with a percentile bootstrap interval, each
// side resampling its own problems independently.
func diffCI(a, b []rowValue, reps int, seed uint64) (d, lo, hi float64, ok bool) {
	if len(a) == 0 || len(b) == 0 {
		return 0, 0, 0, false
	}
	ca, cb := clusters(a), clusters(b)
	mean := func(cl [][]float64, pick func(int) int) float64 {
		s, n := 0.0, 0
		for i := range cl {
			for _, v := range cl[pick(i)] {
				s += v
				n++
			}
		}
		return s / float64(n)
	}
	id := func(i int) int { return i }
	d = mean(ca, id) - mean(cb, id)
	if reps <= 0 {
		return d, d, d, true
	}
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	ds := make([]float64, reps)
	for r := range ds {
		ds[r] = mean(ca, func(int) int { return rng.IntN(len(ca)) }) - mean(cb, func(int) int { return rng.IntN(len(cb)) })
	}
	slices.Sort(ds)
	q := func(p float64) float64 { return ds[min(len(ds)-1, int(math.Floor(p*float64(len(ds)))))] }
	return d, q(0.025), q(0.975), true
}
