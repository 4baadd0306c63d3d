package configaudit

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
)

// reportCharts draws the per-severity found and fixed shares and, when
// tools were called, the mean calls per episode of each tool.
func reportCharts(m ReportMetrics, n int) []report.Chart {
	sevNames := []string{"low", "med", "high"}
	found, fixedRate, totals := make([]float64, 3), make([]float64, 3), make([]int, 3)
	for i, s := range sevNames {
		st := m.Severity[s]
		found[i] = metrics.Div(float64(st.Found), float64(st.Total))
		fixedRate[i] = metrics.Div(float64(st.Fixed), float64(st.Total))
		totals[i] = st.Total
	}
	charts := []report.Chart{
		{Name: "severity_found", Title: "Share of oracle violations found, by severity"},
		{Name: "severity_fixed", Title: "Share of oracle violations fixed by the patch, by severity"},
	}
	charts[0].SVG = report.BarChart(charts[0].Title, "share of oracle violations found (n = violations)", sevNames, found, totals, true)
	charts[1].SVG = report.BarChart(charts[1].Title, "share of oracle violations fixed (n = violations)", sevNames, fixedRate, totals, true)
	if len(m.Tools) > 0 {
		names := slices.Sorted(maps.Keys(m.Tools))
		vals, calls := make([]float64, len(names)), make([]int, len(names))
		for i, k := range names {
			vals[i] = metrics.Div(float64(m.Tools[k].Calls), float64(n))
			calls[i] = m.Tools[k].Calls
		}
		c := report.Chart{Name: "tool_calls", Title: "Mean tool calls per episode"}
		c.SVG = report.BarChart(c.Title, fmt.Sprintf("calls per episode over %d episodes (n = calls)", n), names, vals, calls, false)
		charts = append(charts, c)
	}
	return charts
}

func markdown(meta *artifact.Metadata, m ReportMetrics, ref *report.ReferenceSummary, rm ReferenceMetrics, meanReward float64,
	comps map[string]float64, charts []report.Chart, n, unparsed int, ci map[string]metrics.CI, reps int) string {
	var b strings.Builder
	b.WriteString("# E2 config verification report\n\n")
	if meta != nil {
		b.WriteString(report.RunTable(meta))
		b.WriteString("\n")
	}
	hasRows := n > 0
	fmt.Fprintf(&b, "%d scored rows (%d without a parseable answer). Mean reward %s.\n\n", n, unparsed, report.FOpt(report.Opt(meanReward, hasRows)))
	ciCell := func(name string) string {
		if c, ok := ci[name]; ok {
			return report.CICell(c, reps)
		}
		return ""
	}
	b.WriteString("## Headline\n\n")
	b.WriteString(report.Table([]string{"metric", "value", "95% CI"}, [][]string{
		{"F1 (severity-weighted, micro)", report.FOpt(m.Weighted.F1), ciCell("f1_weighted")},
		{"patch fix rate", report.FOpt(m.PatchFixRate), ciCell("patch_fix_rate")},
		{"mean reward", report.FOpt(report.Opt(meanReward, hasRows)), ciCell("mean_reward")},
	}))
	b.WriteString("\nCIs: percentile cluster bootstrap over examples (all rollouts of a drawn example together), seeded, so reports are reproducible.\n\n")
	b.WriteString("## Detection\n\n")
	b.WriteString(report.Table([]string{"", "precision", "recall", "F1"}, [][]string{
		{"severity-weighted (micro)", report.FOpt(m.Weighted.Precision), report.FOpt(m.Weighted.Recall), report.FOpt(m.Weighted.F1)},
		{"unweighted (micro)", report.FOpt(m.Unweighted.Precision), report.FOpt(m.Unweighted.Recall), report.FOpt(m.Unweighted.F1)},
	}))
	fmt.Fprintf(&b, "\nMean per-row weighted F1 %s; positive-only F1 (rows with a non-empty oracle) %s.\n\n", report.FOpt(m.MeanF1Weighted), report.FOpt(m.PositiveOnlyF1))
	if len(m.ByFixture) > 0 {
		var rows [][]string
		for _, ft := range slices.Sorted(maps.Keys(m.ByFixture)) {
			p := m.ByFixture[ft]
			rows = append(rows, []string{ft, report.FOpt(p.Precision), report.FOpt(p.Recall), report.FOpt(p.F1)})
		}
		b.WriteString(report.Table([]string{"fixture type", "precision (w)", "recall (w)", "F1 (w)"}, rows))
		b.WriteString("\n")
	}
	b.WriteString("## Clean files\n\n")
	fmt.Fprintf(&b, "%d clean rows: clean pass rate %s, false-positive rate %s.\n\n", m.CleanRows, report.PctOpt(m.CleanPassRate), report.PctOpt(m.FPRateOnClean))
	b.WriteString("## Patches\n\n")
	b.WriteString(report.Table([]string{"metric", "value"}, [][]string{
		{"patch provided", report.PctOpt(m.PatchProvidedRate)},
		{"patch applied (of provided)", report.PctOpt(m.PatchSuccessRate)},
		{"fix rate (fixed weight / fixable weight, applied patches)", report.PctOpt(m.PatchFixRate)},
		{"mean violations fixed per row", report.FOpt(m.MeanViolationsFixed)},
		{"new violations introduced (total / per row)", fmt.Sprintf("%d / %s", m.NewViolations, report.FOpt(m.MeanNewViolations))},
	}))
	b.WriteString("\n## Per severity\n\n")
	var sevRows [][]string
	for _, s := range []string{"low", "med", "high"} {
		st := m.Severity[s]
		sevRows = append(sevRows, []string{s, fmt.Sprint(st.Total), fmt.Sprint(st.Found), fmt.Sprint(st.Fixed)})
	}
	b.WriteString(report.Table([]string{"severity", "total", "found", "fixed"}, sevRows))
	b.WriteString("\n## Tool economy\n\n")
	fmt.Fprintf(&b, "Mean %s calls and %s ms of tool time per episode; %s calls per finding returned; mean %s turns; format valid %s.\n\n",
		report.FOpt(m.MeanToolCalls), report.FOpt(m.MeanToolTimeMS), report.FOpt(m.CallsPerFinding), report.FOpt(m.MeanTurns), report.PctOpt(m.FormatValidRate))
	if len(m.Tools) > 0 {
		var rows [][]string
		for _, k := range slices.Sorted(maps.Keys(m.Tools)) {
			t := m.Tools[k]
			rows = append(rows, []string{k, fmt.Sprint(t.Calls), fmt.Sprint(t.Errors), fmt.Sprint(t.Findings), report.F(t.MeanMS)})
		}
		b.WriteString(report.Table([]string{"tool", "calls", "errors", "findings", "mean ms"}, rows))
		b.WriteString("\n")
	}
	if len(comps) > 0 {
		b.WriteString("## Reward components\n\n")
		var rows [][]string
		for _, k := range slices.Sorted(maps.Keys(comps)) {
			rows = append(rows, []string{k, report.F(comps[k])})
		}
		b.WriteString(report.Table([]string{"component", "mean"}, rows))
		b.WriteString("\n")
	}
	b.WriteString("## Charts\n\n")
	for _, c := range charts {
		b.WriteString(report.ChartRef(c))
		b.WriteString("\n")
	}
	writeReferenceSection(&b, ref, rm)
	return b.String()
}
