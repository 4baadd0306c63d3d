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
	for _, q := range st.Quality {
		out = append(out, fmt.Sprintf("%s: against the executable verifier's solved, the judge's yes (%s) has precision %s and recall %s; its %d false positive(s) are rollouts a judge reward pays for and the verifier does not.", q.Run, q.JudgeSource, q.Precision, q.Recall, q.FP))
	}
	if st.Control == "" {
		out = append(out, "No random-reward control run was given (--control, or a run trained with reward_source=random): a gain of any arm cannot be attributed to its reward. Published RLVR results show random rewards improving some models, so a gain may come from training itself (format, length, sampling) rather than from what the reward pays for.")
	}
	for _, g := range st.ControlGains {
		verdict := "the interval excludes 0: this arm's gain exceeds the random-reward control's by more than resampling noise"
		if g.Lo <= 0 && g.Hi >= 0 {
			verdict = "the interval includes 0: this arm's gain is not separated from what random rewards give"
		}
		out = append(out, fmt.Sprintf("gain of %s beyond the random-reward control %s (executable reward of the final rollouts, same base model): %+.4f [%.4f, %.4f]; %s.", g.Run, g.Control, g.Delta, g.Lo, g.Hi, verdict))
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
	writeStudyQuality(&b, st.Quality)
	writeStudyControl(&b, st)
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

func writeStudyQuality(b *strings.Builder, qs []RunQuality) {
	if len(qs) == 0 {
		return
	}
	b.WriteString("\n## Reward quality: the judge against the executable verdict\n\n")
	b.WriteString("Ground truth: the executable verifier's solved on each run's final rollouts; positive: the judge said yes (judge component ≥ 1), the pass `rewards agree` counts. The judge's false positives are what a policy trained on it learns to produce. Wilson 95% intervals (rollouts treated as independent); n/a when undefined.\n\n")
	var rows [][]string
	for _, q := range qs {
		fps := strings.Join(q.FalsePositives, ", ")
		rows = append(rows, []string{q.Run, q.RewardSource, q.JudgeSource, fmt.Sprint(q.TP), fmt.Sprint(q.FP), fmt.Sprint(q.FN), fmt.Sprint(q.TN), q.Precision.String(), q.Recall.String(), cmpDash(fps)})
	}
	b.WriteString(Table([]string{"run", "trained on", "judge", "TP", "FP", "FN", "TN", "precision [95% CI]", "recall [95% CI]", "first false positives"}, rows))
}

func writeStudyControl(b *strings.Builder, st *Study) {
	b.WriteString("\n## Random-reward control\n\n")
	if st.Control == "" {
		b.WriteString("**No random-reward control run was given** (`--control RUN_DIR`, or a run trained with reward_source=random): a gain of any arm cannot be attributed to its reward, since random rewards improve some models.\n")
		return
	}
	fmt.Fprintf(b, "Control: `%s`. Each arm's gain beyond the control's is the difference of executable reward on the final rollouts (with a shared base model the base cancels), bootstrap 95%% interval over problems; the trainer's eval gains (after − before) are point figures.\n\n", st.Control)
	var rows [][]string
	for _, g := range st.ControlGains {
		rows = append(rows, []string{g.Run, fmt.Sprintf("%+.4f [%.4f, %.4f]", g.Delta, g.Lo, g.Hi), FOpt(g.EvalGain), FOpt(g.ControlGain), FOpt(g.EvalGainDiff)})
	}
	b.WriteString(Table([]string{"arm", "Δ executable reward vs control [95% CI]", "arm eval gain", "control eval gain", "difference"}, rows))
}
