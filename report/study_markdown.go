package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

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
