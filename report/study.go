package report

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

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
	Runs       []StudyRun              `json:"runs"`
	Parity     []ParityRow             `json:"parity"`
	Mismatched []string                `json:"budget_mismatches"`
	Identity   []string                `json:"identity_differences"`
	Cross      []CrossScore            `json:"cross_scoring"`
	Gaps       []Gap                   `json:"hacking_gap"`
	Curves     map[string][]CurvePoint `json:"curves"`
	Evidence   []string                `json:"evidence"`
	Bootstrap  map[string]any          `json:"bootstrap"`
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
	baseline := -1
	for i, r := range runs {
		cs := crossScore(r, reps, seed)
		st.Cross = append(st.Cross, cs)
		if r.Training != nil {
			st.Curves[r.Name] = r.Training.Curve
		}
		if baseline < 0 && (r.RewardSource == "executable" || r.RewardSource == "hybrid") {
			baseline = i
		}
	}
	if baseline >= 0 {
		for i, r := range runs {
			if i == baseline {
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
		switch {
		case i < len(r.Judge) && r.Judge[i] != nil:
			judge = append(judge, rowValue{row.Index, *r.Judge[i]})
			judgeSrc = "asked during the study"
		case r.Judge == nil:
			if v, ok := row.Trainer.Components["judge"]; ok {
				judge = append(judge, rowValue{row.Index, v})
				judgeSrc = "recorded by the trainer"
			}
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

// evidence says, in sentences, what the study supports and what it does not.
func evidence(st *Study) []string {
	var out []string
	for _, c := range st.Cross {
		if c.Executable == nil {
			continue
		}
		probs := c.Executable.Basis
		out = append(out, fmt.Sprintf("%s (%s): its rollouts at step(s) %v score %.4f [%.4f, %.4f] under the executable verifier (%s).", c.Run, c.RewardSource, c.Steps, c.Executable.Mean, c.Executable.Lo, c.Executable.Hi, probs))
	}
	for _, g := range st.Gaps {
		verdict := "the interval excludes 0: on these rollouts the difference is larger than resampling noise"
		if g.Lo <= 0 && g.Hi >= 0 {
			verdict = "the interval includes 0: these rollouts do not separate the runs"
		}
		out = append(out, fmt.Sprintf("executable reward of %s minus %s: %+.4f [%.4f, %.4f]; %s.", g.Run, g.Baseline, g.Delta, g.Lo, g.Hi, verdict))
	}
	out = append(out,
		"Each run is one training seed, and its rollouts come from one step of training, a few problems sampled several times each: this is an exploratory result about these runs, not an estimate of how reward sources compare in general. The intervals cover resampling of problems only, not seed-to-seed variation, which a second seed per arm would measure.",
		"A trainer's own eval (avg@1) is a point figure without per-example rows, so it is shown without an interval.")
	if len(st.Mismatched) > 0 {
		out = append(out, fmt.Sprintf("The runs differ in budget field(s) %s besides the setting studied: differences may come from those too.", strings.Join(st.Mismatched, ", ")))
	}
	if len(st.Identity) > 0 {
		out = append(out, fmt.Sprintf("Identity differs in %s (shown in the parity table): the runs trained different environment builds, so the comparison is of those builds, not only of the reward source.", strings.Join(st.Identity, ", ")))
	}
	return out
}

func studyCharts(st *Study) []Chart {
	var charts []Chart
	steps := map[int64]bool{}
	for _, c := range st.Curves {
		for _, p := range c {
			steps[p.Step] = true
		}
	}
	if len(steps) > 1 {
		xs := slices.Sorted(maps.Keys(steps))
		x := make([]float64, len(xs))
		for i, s := range xs {
			x[i] = float64(s)
		}
		var series []Series
		for i, r := range st.Runs {
			c, ok := st.Curves[r.Name]
			if !ok {
				continue
			}
			at := map[int64]CurvePoint{}
			for _, p := range c {
				at[p.Step] = p
			}
			raw, sm := make([]float64, len(xs)), make([]float64, len(xs))
			for j, s := range xs {
				raw[j], sm[j] = math.NaN(), math.NaN()
				if p, ok := at[s]; ok {
					raw[j], sm[j] = p.Reward, p.Smoothed
				}
			}
			color := seriesColors[i%len(seriesColors)]
			series = append(series, Series{Name: r.Name + " (" + r.RewardSource + ")", Mean: sm, Color: color}, Series{Name: r.Name + " each step", Mean: raw, Points: true, Color: color})
		}
		ch := Chart{Name: "study_curves", Title: "Training reward by step, each run on its own reward source"}
		ch.SVG = LineChart(ch.Title, "training step", "reward the run was trained on", x, series, false)
		charts = append(charts, ch)
	}
	var labels []string
	var values []float64
	var counts []int
	for _, c := range st.Cross {
		add := func(what string, e *Estimate) {
			if e != nil {
				labels = append(labels, c.Run+": "+what)
				values = append(values, e.Mean)
				counts = append(counts, e.N)
			}
		}
		add("trained on ("+c.RewardSource+")", c.TrainedOn)
		add("executable", c.Executable)
		add("judge", c.Judge)
	}
	if len(labels) > 0 {
		ch := Chart{Name: "study_cross_scoring", Title: "Final rollouts under each reward source (cross-scoring)"}
		ch.SVG = BarChart(ch.Title, "mean reward", labels, values, counts, false)
		charts = append(charts, ch)
	}
	return charts
}

func est(e *Estimate) string {
	if e == nil {
		return "n/a"
	}
	return fmt.Sprintf("%s [%s, %s] (n=%d)", F(e.Mean), F(e.Lo), F(e.Hi), e.N)
}

func studyMarkdown(st *Study, charts []Chart) string {
	var b strings.Builder
	b.WriteString("# Training-run study\n\n")
	var names []string
	for _, r := range st.Runs {
		names = append(names, fmt.Sprintf("`%s` (%s)", r.Name, r.RewardSource))
	}
	fmt.Fprintf(&b, "Runs: %s.\n\n## Budget parity\n\n", strings.Join(names, ", "))
	header := []string{"field", "kind"}
	for _, r := range st.Runs {
		header = append(header, r.Name)
	}
	header = append(header, "")
	var rows [][]string
	for _, p := range st.Parity {
		row := []string{p.Field, p.Kind}
		for _, v := range p.Values {
			row = append(row, cmpDash(v))
		}
		flag := "same"
		if !p.Same {
			flag = "**differs**"
		}
		rows = append(rows, append(row, flag))
	}
	b.WriteString(Table(header, rows))
	if len(st.Mismatched) > 0 {
		fmt.Fprintf(&b, "\nBudget fields that differ: %s.\n", strings.Join(st.Mismatched, ", "))
	}
	if len(st.Identity) > 0 {
		fmt.Fprintf(&b, "\nIdentity differences (flagged, not hidden): %s.\n", strings.Join(st.Identity, ", "))
	}
	b.WriteString("\n## Cross-scoring: final rollouts under each reward source\n\n")
	rows = nil
	for _, c := range st.Cross {
		rows = append(rows, []string{c.Run, c.RewardSource, fmt.Sprint(c.Steps), est(c.TrainedOn), est(c.Executable), est(c.Solved), est(c.Judge) + judgeNote(c.JudgeSource), FOpt(c.EvalBefore) + " → " + FOpt(c.EvalAfter)})
	}
	b.WriteString(Table([]string{"run", "trained on", "rollout step", "trained-on reward [95% CI]", "executable reward [95% CI]", "executable solved", "judge reward", "trainer eval before → after"}, rows))
	if len(st.Gaps) > 0 {
		b.WriteString("\n**Hacking gap** (executable reward of a run minus the executable- or hybrid-rewarded baseline's):\n\n")
		rows = nil
		for _, g := range st.Gaps {
			rows = append(rows, []string{g.Run, g.Baseline, fmt.Sprintf("%+.4f [%.4f, %.4f]", g.Delta, g.Lo, g.Hi)})
		}
		b.WriteString(Table([]string{"run", "baseline", "Δ executable reward [95% CI]"}, rows))
	}
	b.WriteString("\n## Charts\n\n")
	for _, c := range charts {
		b.WriteString(ChartRef(c))
	}
	b.WriteString("\n## What the evidence supports\n\n")
	for _, e := range st.Evidence {
		b.WriteString("- " + e + "\n")
	}
	fmt.Fprintf(&b, "\nIntervals: seeded percentile bootstrap (%v resamples, seed %v) over problems.\n", st.Bootstrap["reps"], st.Bootstrap["seed"])
	return b.String()
}

func judgeNote(src string) string {
	if src == "" {
		return ""
	}
	return " (" + src + ")"
}

func cmpDash(s string) string {
	if s == "" {
		return "—"
	}
	return EscapeCell(s)
}
