package codevuln

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
)

// ReportBlock is the E3 metrics block for one set of rows (tested tasks, or
// static-only tasks, never mixed).
type ReportBlock struct {
	Rows int `json:"rows"`
	// PatchSuccess is the solved rate (Info.SolvedWhen).
	PatchSuccess float64 `json:"patch_success_rate"`
	AppliedRate  float64 `json:"applied_rate"`
	// VisiblePass and HiddenPass are mean per-row test pass fractions over
	// applied rows of tested tasks.
	VisiblePass float64 `json:"visible_test_pass_rate"`
	HiddenPass  float64 `json:"security_test_pass_rate"`
	// StaticDelta is the mean change in finding count (patched − original).
	StaticDelta float64 `json:"static_finding_delta"`
	// StaticFixed is the share of rows on discriminating tasks whose target
	// finding is gone; StaticRows counts those rows.
	StaticFixed     float64        `json:"static_fixed_rate"`
	StaticRows      int            `json:"static_discriminating_rows"`
	NewHighRate     float64        `json:"new_high_severity_rate"`
	SignatureKept   float64        `json:"signature_preservation_rate"`
	DeletionOnly    int            `json:"deletion_only_rejections"`
	CommentOnly     int            `json:"comment_only_patches"`
	NoOp            int            `json:"no_op_patches"`
	Rejected        int            `json:"rejected_answers"`
	MeanLines       float64        `json:"mean_lines_changed"`
	MeanSizeVsRef   float64        `json:"mean_size_vs_reference"`
	MeanReward      float64        `json:"mean_reward"`
	SandboxKills    map[string]int `json:"sandbox_kills_by_reason"`
	CompileFailures int            `json:"go_compile_failures"`
}

// ReportGroup is one line of a per-CWE or per-language table.
type ReportGroup struct {
	Name         string  `json:"name"`
	N            int     `json:"n"`
	PatchSuccess float64 `json:"patch_success_rate"`
	HiddenPass   float64 `json:"security_test_pass_rate"`
	MeanReward   float64 `json:"mean_reward"`
}

type acc struct {
	b                                           ReportBlock
	solved, applied, vis, hid, delta, sizeRatio float64
	staticFixed, newHigh, sig, lines, reward    float64
	testedApplied                               int
}

func num(p map[string]any, k string) float64 {
	v, _ := report.Number(p[k])
	return v
}

func (a *acc) add(r *artifact.Result) {
	p := r.Parsed
	a.b.Rows++
	a.reward += r.Reward
	if r.Solved != nil && *r.Solved {
		a.solved++
	}
	if p["applied"] != true {
		a.b.Rejected++
		return
	}
	a.applied++
	if t, ok := report.Number(p["visible_total"]); ok && t > 0 {
		a.testedApplied++
		a.vis += num(p, "visible_passed") / t
		if ht := num(p, "hidden_total"); ht > 0 {
			a.hid += num(p, "hidden_passed") / ht
		}
	}
	a.delta += num(p, "findings_patched") - num(p, "findings_original")
	if p["static_discriminates"] == true {
		a.b.StaticRows++
		if rem, _ := p["static_remaining"].([]any); len(rem) == 0 {
			a.staticFixed++
		}
	}
	if nh, _ := p["new_high"].([]any); len(nh) > 0 {
		a.newHigh++
	}
	if miss, _ := p["api_missing"].([]any); len(miss) == 0 {
		a.sig++
	}
	switch {
	case p["no_op"] == true:
		a.b.NoOp++
	case p["deletion_only"] == true:
		a.b.DeletionOnly++
	case p["comment_only"] == true:
		a.b.CommentOnly++
	}
	lines := num(p, "lines_added") + num(p, "lines_removed")
	a.lines += lines
	if ref := num(p, "ref_lines_changed"); ref > 0 {
		a.sizeRatio += lines / ref
	}
	if ks, _ := p["sandbox_kills"].([]any); len(ks) > 0 {
		if a.b.SandboxKills == nil {
			a.b.SandboxKills = map[string]int{}
		}
		for _, k := range ks {
			a.b.SandboxKills[fmt.Sprint(k)]++
		}
	}
	if p["compile_failed"] == true {
		a.b.CompileFailures++
	}
}

func (a *acc) block() ReportBlock {
	b := a.b
	n := float64(b.Rows)
	b.PatchSuccess = metrics.Div(a.solved, n)
	b.AppliedRate = metrics.Div(a.applied, n)
	b.VisiblePass = metrics.Div(a.vis, float64(a.testedApplied))
	b.HiddenPass = metrics.Div(a.hid, float64(a.testedApplied))
	b.StaticDelta = metrics.Div(a.delta, a.applied)
	b.StaticFixed = metrics.Div(a.staticFixed, float64(b.StaticRows))
	b.NewHighRate = metrics.Div(a.newHigh, a.applied)
	b.SignatureKept = metrics.Div(a.sig, a.applied)
	b.MeanLines = metrics.Div(a.lines, a.applied)
	b.MeanSizeVsRef = metrics.Div(a.sizeRatio, a.applied)
	b.MeanReward = metrics.Div(a.reward, n)
	return b
}

// BuildReport is the code-vuln-repair (E3) report.Builder. Tested
// (repair), static-only and secure-generation tasks are reported in
// separate blocks; headline and key metrics come from repairs only.
func BuildReport(rows []artifact.Result, meta *artifact.Metadata, opts report.Options) (*report.Report, error) {
	var tested, static acc
	var gen genAcc
	var problems []report.Problem
	byCWE, byLang := map[string]*acc{}, map[string]*acc{}
	modes := map[string]int{}
	var testedPos []int
	for i := range rows {
		r := &rows[i]
		if p, bad := report.ExcludedRow(i, r); bad {
			problems = append(problems, p)
			continue
		}
		if r.Parsed == nil {
			problems = append(problems, report.Problem{Row: i, Index: r.Index, Rollout: r.Rollout, Kind: report.ProblemUnparsed, Detail: "no verifier output"})
			continue
		}
		if m, ok := r.Parsed["sandbox_mode"].(string); ok {
			modes[m]++
		}
		switch r.Parsed["mode"] {
		case "static-only":
			static.add(r)
			continue
		case "generate":
			gen.add(r)
			continue
		}
		tested.add(r)
		testedPos = append(testedPos, i)
		for _, g := range []struct {
			m   map[string]*acc
			key string
		}{{byCWE, fmt.Sprint(r.Parsed["cwe"])}, {byLang, fmt.Sprint(r.Parsed["language"])}} {
			if g.m[g.key] == nil {
				g.m[g.key] = &acc{}
			}
			g.m[g.key].add(r)
		}
	}
	tb, sb, gb := tested.block(), static.block(), gen.block()
	groups := func(m map[string]*acc) []ReportGroup {
		var out []ReportGroup
		for _, k := range slices.Sorted(maps.Keys(m)) {
			b := m[k].block()
			out = append(out, ReportGroup{Name: k, N: b.Rows, PatchSuccess: b.PatchSuccess, HiddenPass: b.HiddenPass, MeanReward: b.MeanReward})
		}
		return out
	}
	cwe, lang := groups(byCWE), groups(byLang)
	_, comps := report.RewardStats(rows, testedPos)
	summary := map[string]any{
		"tested": tb, "static_only": sb, "generate": gb, "per_cwe": cwe, "per_language": lang, "sandbox_modes": modes,
		"mean_components": comps, "problems": len(problems),
	}
	var solvedPtr, hiddenPtr *float64
	if tb.Rows > 0 {
		solvedPtr, hiddenPtr = &tb.PatchSuccess, &tb.HiddenPass
	}
	key := []report.KeyMetric{
		report.Key("patch_success_rate", solvedPtr, true),
		report.Key("security_test_pass_rate", hiddenPtr, true),
		{Name: "visible_test_pass_rate", Value: tb.VisiblePass, HigherIsBetter: true, Undefined: tb.Rows == 0},
		{Name: "new_high_severity_rate", Value: tb.NewHighRate, HigherIsBetter: false, Undefined: tb.Rows == 0},
		{Name: "signature_preservation_rate", Value: tb.SignatureKept, HigherIsBetter: true, Undefined: tb.Rows == 0},
		{Name: "mean_reward", Value: tb.MeanReward, HigherIsBetter: true, Undefined: tb.Rows == 0},
	}
	modeList := slices.Sorted(maps.Keys(modes))
	headline := []report.Stat{
		{Name: "rows (tested / static-only / excluded)", Value: fmt.Sprintf("%d / %d / %d", tb.Rows, sb.Rows, len(problems))},
		{Name: "patch success (solved)", Value: report.Pct(tb.PatchSuccess)},
		{Name: "visible / security test pass", Value: report.Pct(tb.VisiblePass) + " / " + report.Pct(tb.HiddenPass)},
		{Name: "new high-severity findings", Value: report.Pct(tb.NewHighRate)},
		{Name: "signature preserved", Value: report.Pct(tb.SignatureKept)},
		{Name: "no-op / deletion-only / comment-only", Value: fmt.Sprintf("%d / %d / %d", tb.NoOp, tb.DeletionOnly, tb.CommentOnly)},
		{Name: "sandbox mode", Value: fmt.Sprint(modeList)},
		{Name: "mean reward", Value: report.F(tb.MeanReward)},
	}
	if sb.Rows > 0 {
		headline = append(headline, report.Stat{Name: "static-only tasks: static fixed (reported apart)", Value: report.Pct(sb.StaticFixed)})
	}
	if gb.Rows > 0 {
		headline = append(headline, report.Stat{Name: "secure generation: func / sec / func-sec (reported apart)",
			Value: report.Pct(gb.Func) + " / " + report.Pct(gb.Sec) + " / " + report.Pct(gb.FuncSec)})
	}
	var charts []report.Chart
	if len(cwe) > 0 {
		labels, vals, ns := make([]string, len(cwe)), make([]float64, len(cwe)), make([]int, len(cwe))
		for i, g := range cwe {
			labels[i], vals[i], ns[i] = g.Name, g.PatchSuccess, g.N
		}
		c := report.Chart{Name: "cwe_patch_success", Title: "Patch success by CWE (tested tasks)"}
		c.SVG = report.BarChart(c.Title, "solved rate (n = rows)", labels, vals, ns, true)
		charts = append(charts, c)
	}
	r := &report.Report{Summary: summary, Headline: headline, Key: key, Charts: charts, Problems: problems}
	r.Markdown = markdownReport(meta, tb, sb, generateMarkdown(gb), cwe, lang, modes, comps, charts, len(problems))
	return r, nil
}

func blockTable(b ReportBlock) string {
	kills := "none"
	if len(b.SandboxKills) > 0 {
		ks := slices.Sorted(maps.Keys(b.SandboxKills))
		kills = ""
		for i, k := range ks {
			if i > 0 {
				kills += ", "
			}
			kills += fmt.Sprintf("%s %d", k, b.SandboxKills[k])
		}
	}
	return report.Table([]string{"metric", "value"}, [][]string{
		{"rows", fmt.Sprint(b.Rows)},
		{"patch success rate (solved)", report.Pct(b.PatchSuccess)},
		{"answers applied", report.Pct(b.AppliedRate)},
		{"visible behavioural test pass rate", report.Pct(b.VisiblePass)},
		{"hidden security test pass rate", report.Pct(b.HiddenPass)},
		{"static finding delta (mean, patched − original)", fmt.Sprintf("%+.2f", b.StaticDelta)},
		{fmt.Sprintf("task CWE finding removed (%d rows on tasks the analysers discriminate)", b.StaticRows), report.Pct(b.StaticFixed)},
		{"new high-severity finding rate", report.Pct(b.NewHighRate)},
		{"signature/API preserved", report.Pct(b.SignatureKept)},
		{"rejected answers / no-op / deletion-only / comment-only", fmt.Sprintf("%d / %d / %d / %d", b.Rejected, b.NoOp, b.DeletionOnly, b.CommentOnly)},
		{"mean lines changed (× reference fix)", fmt.Sprintf("%.1f (%.2f×)", b.MeanLines, b.MeanSizeVsRef)},
		{"sandbox kills by reason", kills},
		{"Go compile failures", fmt.Sprint(b.CompileFailures)},
		{"mean reward", report.F(b.MeanReward)},
	})
}

func markdownReport(meta *artifact.Metadata, tb, sb ReportBlock, gen string, cwe, lang []ReportGroup, modes map[string]int, comps map[string]float64, charts []report.Chart, problems int) string {
	var b bytes.Buffer
	title := "E3 code-vulnerability repair"
	if meta != nil && meta.Model != "" {
		title += " — " + meta.Model
	}
	fmt.Fprintf(&b, "# %s\n\n## Run\n\n%s\n", report.EscapeCell(title), report.RunTable(meta))
	var ms []string
	for _, m := range slices.Sorted(maps.Keys(modes)) {
		ms = append(ms, fmt.Sprintf("%s (%d rows)", m, modes[m]))
	}
	fmt.Fprintf(&b, "Sandbox mode: %s. Rows excluded (API or scoring errors, no verifier output): %d.\n\n", strings.Join(ms, ", "), problems)
	b.WriteString("## Tested tasks\n\n")
	b.WriteString(blockTable(tb))
	if len(comps) > 0 {
		b.WriteString("\n### Mean reward components\n\n")
		var rows [][]string
		keys := slices.Sorted(maps.Keys(comps))
		slices.Sort(keys)
		for _, k := range keys {
			rows = append(rows, []string{k, report.F(comps[k])})
		}
		b.WriteString(report.Table([]string{"component", "mean"}, rows))
	}
	for _, g := range []struct {
		title string
		gs    []ReportGroup
	}{{"By CWE", cwe}, {"By language", lang}} {
		if len(g.gs) == 0 {
			continue
		}
		fmt.Fprintf(&b, "\n### %s\n\n", g.title)
		var rows [][]string
		for _, x := range g.gs {
			rows = append(rows, []string{x.Name, fmt.Sprint(x.N), report.Pct(x.PatchSuccess), report.Pct(x.HiddenPass), report.F(x.MeanReward)})
		}
		b.WriteString(report.Table([]string{"group", "n", "solved", "security tests", "mean reward"}, rows))
	}
	if sb.Rows > 0 {
		b.WriteString("\n## Static-only tasks (no tests; never mixed with the above)\n\n")
		b.WriteString(blockTable(sb))
	}
	b.WriteString(gen)
	if len(charts) > 0 {
		b.WriteString("\n## Charts\n\n")
		for _, c := range charts {
			b.WriteString(report.ChartRef(c))
			b.WriteString("\n")
		}
	}
	return b.String()
}
