package report

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

func init() { Register(EnvConfigVerification, BuildE2) }

// e2Weight is the reference's severity weight (low 0.3, med 0.6, high 1.0;
// anything else as med).
func e2Weight(sev string) float64 {
	switch strings.ToLower(sev) {
	case "low", "info":
		return 0.3
	case "high", "critical", "error":
		return 1.0
	}
	return 0.6
}

func e2Sev(sev string) string {
	switch strings.ToLower(sev) {
	case "low", "info":
		return "low"
	case "high", "critical", "error":
		return "high"
	}
	return "med"
}

// e2Items reads a Parsed list of {id, severity} objects as id -> severity.
func e2Items(v any) (map[string]string, []string) {
	list, _ := v.([]any)
	m := make(map[string]string, len(list))
	var order []string
	for _, it := range list {
		obj, ok := it.(map[string]any)
		if !ok {
			continue
		}
		id, _ := obj["id"].(string)
		sev, _ := obj["severity"].(string)
		if id == "" {
			continue
		}
		if _, dup := m[id]; !dup {
			order = append(order, id)
		}
		m[id] = e2Sev(sev)
	}
	return m, order
}

func e2Bool(v any) bool { b, _ := v.(bool); return b }

// E2PRF is a precision/recall/F1 triple.
type E2PRF struct {
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

func prf(tp, fp, fn float64) E2PRF {
	p, r := metrics.Div(tp, tp+fp), metrics.Div(tp, tp+fn)
	return E2PRF{Precision: p, Recall: r, F1: metrics.Div(2*p*r, p+r)}
}

// E2ToolStats is one tool's share of the calls.
type E2ToolStats struct {
	Calls    int     `json:"calls"`
	Errors   int     `json:"errors"`
	Findings int     `json:"findings"`
	MeanMS   float64 `json:"mean_ms"`
	TotalMS  float64 `json:"total_ms"`
}

// E2Severity is one row of the per-severity table.
type E2Severity struct {
	Total int `json:"total"`
	Found int `json:"found"`
	Fixed int `json:"fixed"`
}

// E2Metrics is the E2 metrics contract.
type E2Metrics struct {
	Weighted            E2PRF                  `json:"weighted"`
	Unweighted          E2PRF                  `json:"unweighted"`
	MeanF1Weighted      float64                `json:"mean_f1_weighted"`
	PositiveOnlyF1      float64                `json:"positive_only_f1"`
	PatchProvidedRate   float64                `json:"patch_provided_rate"`
	PatchSuccessRate    float64                `json:"patch_success_rate"`
	PatchFixRate        float64                `json:"patch_fix_rate"`
	MeanViolationsFixed float64                `json:"mean_violations_fixed"`
	NewViolations       int                    `json:"new_violations_introduced"`
	MeanNewViolations   float64                `json:"mean_new_violations_introduced"`
	MeanToolCalls       float64                `json:"mean_tool_calls"`
	MeanToolTimeMS      float64                `json:"mean_tool_time_ms"`
	CallsPerFinding     float64                `json:"calls_per_finding"`
	Tools               map[string]E2ToolStats `json:"tools"`
	FormatValidRate     float64                `json:"format_valid_rate"`
	MeanTurns           float64                `json:"mean_turns"`
	CleanRows           int                    `json:"clean_rows"`
	CleanPassRate       float64                `json:"clean_pass_rate"`
	FPRateOnClean       float64                `json:"false_positive_rate_on_clean"`
	Severity            map[string]E2Severity  `json:"severity"`
	ByFixture           map[string]E2PRF       `json:"by_fixture_type"`
}

type e2Obs struct {
	f1w                    float64
	positive, clean, fpOnC bool
	// Per-row sums, so the bootstrap can recompute micro averages.
	tp, fp, fn       float64
	fixedW, fixableW float64
	reward           float64
}

// BuildE2 computes the E2 report from results rows alone: everything comes
// from Score.Parsed (predicted, oracle, fixed, introduced, patch flags), the
// tool-call records and the turn counts.
func BuildE2(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
	var (
		problems                        []Problem
		errRows, scoreErrRows, unparsed int
		obs                             []e2Obs
		pos                             []int
		wTP, wFP, wFN, uTP, uFP, uFN    float64
		fixTP                           = map[string][3]float64{}
		provided, applied, fmtValid     int
		fixedW, fixableW                float64
		fixedCount, introduced          int
		calls, findings, turns          int
		toolMS                          float64
		tools                           = map[string]E2ToolStats{}
		sev                             = map[string]E2Severity{"low": {}, "med": {}, "high": {}}
		cleanRows, cleanPass            int
	)
	for i := range rows {
		r := &rows[i]
		prob := Problem{Row: i, Index: r.Index, Rollout: r.Rollout}
		if r.Error != "" {
			errRows++
			prob.Kind, prob.Detail = ProblemError, clip(r.Error, 160)
			problems = append(problems, prob)
			continue
		}
		if r.ScoreError != "" {
			scoreErrRows++
			prob.Kind, prob.Detail = ProblemScoreError, clip(r.ScoreError, 160)
			problems = append(problems, prob)
			continue
		}
		if r.Parsed == nil || r.Parsed["oracle"] == nil {
			return nil, fmt.Errorf("row %d (index %d, rollout %d): parsed.oracle is missing; score the run with the config-verification environment", i+1, r.Index, r.Rollout)
		}
		if !e2Bool(r.Parsed["valid_json"]) {
			unparsed++
			prob.Kind, prob.Detail = ProblemUnparsed, "no JSON object with a violations list"
			problems = append(problems, prob)
		}
		pred, predOrder := e2Items(r.Parsed["predicted"])
		oracle, oracleOrder := e2Items(r.Parsed["oracle"])
		fixed, _ := e2Items(r.Parsed["fixed"])
		fixable, _ := e2Items(r.Parsed["fixable"])
		intro, _ := e2Items(r.Parsed["introduced"])
		var tp, fp, fn, utp, ufp, ufn float64
		for _, id := range predOrder {
			if s, ok := oracle[id]; ok {
				tp += e2Weight(s)
				utp++
			} else {
				fp += e2Weight(pred[id])
				ufp++
			}
		}
		for _, id := range oracleOrder {
			if _, ok := pred[id]; !ok {
				fn += e2Weight(oracle[id])
				ufn++
			}
			st := sev[oracle[id]]
			st.Total++
			if _, ok := pred[id]; ok {
				st.Found++
			}
			if _, ok := fixed[id]; ok {
				st.Fixed++
			}
			sev[oracle[id]] = st
		}
		wTP, wFP, wFN = wTP+tp, wFP+fp, wFN+fn
		uTP, uFP, uFN = uTP+utp, uFP+ufp, uFN+ufn
		ft, _ := r.Parsed["fixture_type"].(string)
		acc := fixTP[ft]
		fixTP[ft] = [3]float64{acc[0] + tp, acc[1] + fp, acc[2] + fn}
		o := e2Obs{f1w: prf(tp, fp, fn).F1, positive: len(oracle) > 0, clean: len(oracle) == 0,
			tp: tp, fp: fp, fn: fn, reward: r.Reward}
		if o.clean {
			cleanRows++
			if len(pred) == 0 {
				cleanPass++
			} else {
				o.fpOnC = true
			}
		}
		if e2Bool(r.Parsed["patch_provided"]) {
			provided++
			if e2Bool(r.Parsed["patch_applied"]) {
				applied++
				for _, s := range fixable {
					o.fixableW += e2Weight(s)
				}
				for _, s := range fixed {
					o.fixedW += e2Weight(s)
				}
				fixableW += o.fixableW
				fixedW += o.fixedW
			}
		}
		fixedCount += len(fixed)
		introduced += len(intro)
		if e2Bool(r.Parsed["format_valid"]) {
			fmtValid++
		}
		turns += r.Turns
		for _, tc := range r.ToolCalls {
			calls++
			findings += tc.Findings
			toolMS += tc.DurationMS
			st := tools[tc.Name]
			st.Calls++
			st.Findings += tc.Findings
			st.TotalMS += tc.DurationMS
			if tc.Error != "" && tc.Findings == 0 {
				st.Errors++
			}
			tools[tc.Name] = st
		}
		obs = append(obs, o)
		pos = append(pos, i)
	}
	n := float64(len(obs))
	for k, st := range tools {
		st.MeanMS = metrics.Div(st.TotalMS, float64(st.Calls))
		tools[k] = st
	}
	var sumF1, sumPosF1 float64
	var nPos int
	for _, o := range obs {
		sumF1 += o.f1w
		if o.positive {
			sumPosF1 += o.f1w
			nPos++
		}
	}
	m := E2Metrics{
		Weighted:            prf(wTP, wFP, wFN),
		Unweighted:          prf(uTP, uFP, uFN),
		MeanF1Weighted:      metrics.Div(sumF1, n),
		PositiveOnlyF1:      metrics.Div(sumPosF1, float64(nPos)),
		PatchProvidedRate:   metrics.Div(float64(provided), n),
		PatchSuccessRate:    metrics.Div(float64(applied), float64(provided)),
		PatchFixRate:        metrics.Div(fixedW, fixableW),
		MeanViolationsFixed: metrics.Div(float64(fixedCount), n),
		NewViolations:       introduced,
		MeanNewViolations:   metrics.Div(float64(introduced), n),
		MeanToolCalls:       metrics.Div(float64(calls), n),
		MeanToolTimeMS:      metrics.Div(toolMS, n),
		CallsPerFinding:     metrics.Div(float64(calls), float64(findings)),
		Tools:               tools,
		FormatValidRate:     metrics.Div(float64(fmtValid), n),
		MeanTurns:           metrics.Div(float64(turns), n),
		CleanRows:           cleanRows,
		CleanPassRate:       metrics.Div(float64(cleanPass), float64(cleanRows)),
		FPRateOnClean:       metrics.Div(float64(cleanRows-cleanPass), float64(cleanRows)),
		Severity:            sev,
		ByFixture:           map[string]E2PRF{},
	}
	for ft, a := range fixTP {
		m.ByFixture[ft] = prf(a[0], a[1], a[2])
	}
	meanReward, comps := RewardStats(rows, pos)
	ci := e2Bootstrap(obs, meta, opts)

	summary := map[string]any{
		"metrics":     m,
		"mean_reward": meanReward,
		"components":  comps,
		"ci95":        ci,
		"bootstrap":   map[string]any{"reps": opts.Reps(), "seed": opts.BootstrapSeed(meta), "method": "percentile, resampling scored rows"},
		"counts": map[string]int{
			"scored": len(obs), "errors": errRows, "score_errors": scoreErrRows, "unparsed": unparsed,
			"positive": nPos, "clean": cleanRows,
		},
	}
	key := []KeyMetric{
		{"f1_weighted", m.Weighted.F1, true},
		{"patch_fix_rate", m.PatchFixRate, true},
		{"false_positive_rate_on_clean", m.FPRateOnClean, false},
		{"format_valid_rate", m.FormatValidRate, true},
		{"mean_tool_calls", m.MeanToolCalls, false},
		{"mean_reward", meanReward, true},
	}
	sevNames := []string{"low", "med", "high"}
	found, fixedRate := make([]float64, 3), make([]float64, 3)
	var sevLabels []string
	for i, s := range sevNames {
		st := sev[s]
		found[i] = metrics.Div(float64(st.Found), float64(st.Total))
		fixedRate[i] = metrics.Div(float64(st.Fixed), float64(st.Total))
		sevLabels = append(sevLabels, s)
	}
	charts := []Chart{
		{Name: "severity_found", Title: "Share of oracle violations found, by severity"},
		{Name: "severity_fixed", Title: "Share of oracle violations fixed by the patch, by severity"},
	}
	charts[0].SVG = BarChart(charts[0].Title, sevLabels, found, true)
	charts[1].SVG = BarChart(charts[1].Title, sevLabels, fixedRate, true)
	if len(tools) > 0 {
		names := SortedKeys(tools)
		vals := make([]float64, len(names))
		for i, k := range names {
			vals[i] = metrics.Div(float64(tools[k].Calls), n)
		}
		charts = append(charts, Chart{Name: "tool_calls", Title: "Mean tool calls per episode"})
		charts[len(charts)-1].SVG = BarChart(charts[len(charts)-1].Title, names, vals, false)
	}
	headline := []Stat{
		{"rows", fmt.Sprintf("%d scored, %d API errors, %d score errors, %d unparsed", len(obs), errRows, scoreErrRows, unparsed)},
		{"F1 weighted", FCI(ci["f1_weighted"])},
		{"F1 unweighted", F(m.Unweighted.F1)},
		{"positive-only F1", F(m.PositiveOnlyF1)},
		{"patch provided / applied / fix rate", Pct(m.PatchProvidedRate) + " / " + Pct(m.PatchSuccessRate) + " / " + Pct(m.PatchFixRate)},
		{"new violations introduced", fmt.Sprint(m.NewViolations)},
		{"clean pass / FP on clean", Pct(m.CleanPassRate) + " / " + Pct(m.FPRateOnClean)},
		{"tool calls / episode", F(m.MeanToolCalls)},
		{"patch fix rate", FCI(ci["patch_fix_rate"])},
		{"mean reward", FCI(ci["mean_reward"])},
	}
	r := &Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: problems}
	r.Markdown = e2Markdown(meta, m, meanReward, comps, charts, len(obs), unparsed, ci, opts.Reps())
	return r, nil
}

// e2Bootstrap gives percentile CIs for the micro weighted F1, the patch fix
// rate and the mean reward, resampling scored rows.
func e2Bootstrap(obs []e2Obs, meta *artifact.Metadata, opts Options) map[string]metrics.CI {
	f1 := func(idx []int) float64 {
		var tp, fp, fn float64
		for _, k := range idx {
			tp, fp, fn = tp+obs[k].tp, fp+obs[k].fp, fn+obs[k].fn
		}
		return prf(tp, fp, fn).F1
	}
	fix := func(idx []int) float64 {
		var fixed, fixable float64
		for _, k := range idx {
			fixed, fixable = fixed+obs[k].fixedW, fixable+obs[k].fixableW
		}
		return metrics.Div(fixed, fixable)
	}
	reward := func(idx []int) float64 {
		var sum float64
		for _, k := range idx {
			sum += obs[k].reward
		}
		return metrics.Div(sum, float64(len(idx)))
	}
	cis := metrics.BootstrapMulti(len(obs), []metrics.Stat{f1, fix, reward}, opts.Reps(), opts.BootstrapSeed(meta))
	return map[string]metrics.CI{"f1_weighted": cis[0], "patch_fix_rate": cis[1], "mean_reward": cis[2]}
}

func e2Markdown(meta *artifact.Metadata, m E2Metrics, meanReward float64, comps map[string]float64, charts []Chart, n, unparsed int, ci map[string]metrics.CI, reps int) string {
	var b strings.Builder
	b.WriteString("# E2 config verification report\n\n")
	if meta != nil {
		b.WriteString(RunTable(meta))
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%d scored rows (%d without a parseable answer). Mean reward %s.\n\n", n, unparsed, F(meanReward))
	b.WriteString("## Headline\n\n")
	b.WriteString(Table([]string{"metric", "value", "95% CI"}, [][]string{
		{"F1 (severity-weighted, micro)", F(m.Weighted.F1), ciCell(ci["f1_weighted"], reps)},
		{"patch fix rate", F(m.PatchFixRate), ciCell(ci["patch_fix_rate"], reps)},
		{"mean reward", F(meanReward), ciCell(ci["mean_reward"], reps)},
	}))
	b.WriteString("\nCIs: percentile bootstrap over scored rows, seeded, so reports are reproducible.\n\n")
	b.WriteString("## Detection\n\n")
	b.WriteString(Table([]string{"", "precision", "recall", "F1"}, [][]string{
		{"severity-weighted (micro)", F(m.Weighted.Precision), F(m.Weighted.Recall), F(m.Weighted.F1)},
		{"unweighted (micro)", F(m.Unweighted.Precision), F(m.Unweighted.Recall), F(m.Unweighted.F1)},
	}))
	fmt.Fprintf(&b, "\nMean per-row weighted F1 %s; positive-only F1 (rows with a non-empty oracle) %s.\n\n", F(m.MeanF1Weighted), F(m.PositiveOnlyF1))
	if len(m.ByFixture) > 0 {
		var rows [][]string
		for _, ft := range SortedKeys(m.ByFixture) {
			p := m.ByFixture[ft]
			rows = append(rows, []string{ft, F(p.Precision), F(p.Recall), F(p.F1)})
		}
		b.WriteString(Table([]string{"fixture type", "precision (w)", "recall (w)", "F1 (w)"}, rows))
		b.WriteString("\n")
	}
	b.WriteString("## Clean files\n\n")
	fmt.Fprintf(&b, "%d clean rows: clean pass rate %s, false-positive rate %s.\n\n", m.CleanRows, Pct(m.CleanPassRate), Pct(m.FPRateOnClean))
	b.WriteString("## Patches\n\n")
	b.WriteString(Table([]string{"metric", "value"}, [][]string{
		{"patch provided", Pct(m.PatchProvidedRate)},
		{"patch applied (of provided)", Pct(m.PatchSuccessRate)},
		{"fix rate (fixed weight / fixable weight, applied patches)", Pct(m.PatchFixRate)},
		{"mean violations fixed per row", F(m.MeanViolationsFixed)},
		{"new violations introduced (total / per row)", fmt.Sprintf("%d / %s", m.NewViolations, F(m.MeanNewViolations))},
	}))
	b.WriteString("\n## Per severity\n\n")
	var sevRows [][]string
	for _, s := range []string{"low", "med", "high"} {
		st := m.Severity[s]
		sevRows = append(sevRows, []string{s, fmt.Sprint(st.Total), fmt.Sprint(st.Found), fmt.Sprint(st.Fixed)})
	}
	b.WriteString(Table([]string{"severity", "total", "found", "fixed"}, sevRows))
	b.WriteString("\n## Tool economy\n\n")
	fmt.Fprintf(&b, "Mean %s calls and %s ms of tool time per episode; %s calls per finding returned; mean %s turns; format valid %s.\n\n",
		F(m.MeanToolCalls), F(m.MeanToolTimeMS), F(m.CallsPerFinding), F(m.MeanTurns), Pct(m.FormatValidRate))
	if len(m.Tools) > 0 {
		var rows [][]string
		for _, k := range SortedKeys(m.Tools) {
			t := m.Tools[k]
			rows = append(rows, []string{k, fmt.Sprint(t.Calls), fmt.Sprint(t.Errors), fmt.Sprint(t.Findings), F(t.MeanMS)})
		}
		b.WriteString(Table([]string{"tool", "calls", "errors", "findings", "mean ms"}, rows))
		b.WriteString("\n")
	}
	if len(comps) > 0 {
		b.WriteString("## Reward components\n\n")
		var rows [][]string
		for _, k := range SortedKeys(comps) {
			rows = append(rows, []string{k, F(comps[k])})
		}
		b.WriteString(Table([]string{"component", "mean"}, rows))
		b.WriteString("\n")
	}
	b.WriteString("## Charts\n\n")
	for _, c := range charts {
		b.WriteString(ChartRef(c))
		b.WriteString("\n")
	}
	return b.String()
}
