package report

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/metrics"

	"github.com/svbench/svbench/base/clip"
)

// Table renders a Markdown table. Cells are escaped so model-controlled
// text (scenario names, ids) cannot break the layout.
func Table(header []string, rows [][]string) string {
	var b strings.Builder
	writeRow := func(cells []string) {
		b.WriteString("|")
		for i := range header {
			c := ""
			if i < len(cells) {
				c = cells[i]
			}
			b.WriteString(" ")
			b.WriteString(EscapeCell(c))
			b.WriteString(" |")
		}
		b.WriteString("\n")
	}
	writeRow(header)
	b.WriteString("|")
	for range header {
		b.WriteString("---|")
	}
	b.WriteString("\n")
	for _, r := range rows {
		writeRow(r)
	}
	return b.String()
}

// EscapeCell makes text safe inside a Markdown table cell.
func EscapeCell(s string) string {
	s = strings.NewReplacer("\\", "\\\\", "|", "\\|", "\r", " ", "\n", " ", "<", "&lt;", ">", "&gt;").Replace(s)
	return clip.Runes(s, 200, clip.Ellipsis)
}

// F formats a metric with 4 decimals ("n/a" for NaN).
func F(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", x)
}

// FOpt formats a metric that may be undefined: "n/a" for nil.
func FOpt(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return F(*x)
}

// PctOpt is Pct for a share that may be undefined: "n/a" for nil.
func PctOpt(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return Pct(*x)
}

// CICell is a "95% CI" table cell: "—" when the bootstrap is off.
func CICell(c metrics.CI, reps int) string {
	if reps <= 0 {
		return "—"
	}
	return fmt.Sprintf("[%s, %s]", F(c.Lo), F(c.Hi))
}

// Clip shortens s to n runes, marking the cut with "…".
func Clip(s string, n int) string {
	return clip.Runes(s, n, clip.Ellipsis)
}

// Pct formats a share as a percentage with one decimal.
func Pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// FCI formats a point with its 95% interval, or the point alone when the
// bootstrap was off (reps ≤ 0): a CI computed without resamples has
// Lo = Hi = Point, and printing it as "[x, x]" would claim a zero-width
// interval nobody measured (the dashboard builds reports that way and takes
// intervals from summary.json).
func FCI(c metrics.CI, reps int) string {
	if reps <= 0 {
		return F(c.Point)
	}
	return fmt.Sprintf("%s [%s, %s]", F(c.Point), F(c.Lo), F(c.Hi))
}

// ChartRef is the Markdown image line for a chart written by WriteDir.
func ChartRef(c Chart) string {
	return fmt.Sprintf("![%s](%s.svg)\n", EscapeCell(c.Title), c.Name)
}

// RunTable renders the run metadata block of report.md.
func RunTable(meta *artifact.Metadata) string {
	if meta == nil {
		return "_No metadata.json: model, dataset and seed are unknown._\n"
	}
	dash := func(s string) string {
		if s == "" {
			return "—"
		}
		return s
	}
	date := "—"
	if !meta.Started.IsZero() {
		date = meta.Started.UTC().Format(time.RFC3339)
	}
	ds := dash(meta.Dataset)
	if meta.DatasetRev != "" {
		ds += " (" + meta.DatasetRev + ")"
	}
	rows := [][]string{
		{"run", dash(meta.RunID)},
		{"environment", dash(strings.TrimSpace(meta.Environment + " " + meta.EnvVersion))},
		{"model", dash(meta.Model)},
		{"dataset", ds},
		{"split", splitCell(meta.SplitRead())},
		{"examples × rollouts", fmt.Sprintf("%d × %d", meta.NumExamples, max(meta.Rollouts, 1))},
		{"seed", fmt.Sprint(meta.Seed)},
		{"commit", dash(meta.GitCommit)},
		{"date", date},
		{"status", dash(meta.Status)},
	}
	if meta.EffectiveModel != "" && meta.EffectiveModel != meta.Model {
		rows = append(rows[:3], append([][]string{{"effective model", meta.EffectiveModel}}, rows[3:]...)...)
	}
	if meta.Rubric != "" {
		rows = append(rows, []string{"rubric", meta.Rubric})
	}
	if meta.Source != "" {
		rows = append(rows, []string{"source", meta.Source})
	}
	for _, k := range slices.Sorted(maps.Keys(meta.PassAtK)) {
		rows = append(rows, []string{k, F(meta.PassAtK[k])})
	}
	if meta.SolvedWhen != "" && (len(meta.PassAtK) > 0 || meta.Rollouts > 1) {
		rows = append(rows, []string{"solved (pass@k) when", EscapeCell(meta.SolvedWhen)})
	}
	return SplitWarning(meta.SplitRead()) + Table([]string{"field", "value"}, rows)
}

// splitCell names the split as the run table shows it.
func splitCell(split string) string {
	switch split {
	case "":
		return "— (not recorded, or a dataset file whose name names no split)"
	case env.SplitTest:
		return "test (the evaluation set)"
	}
	return split + " (not an evaluation: see the warning above)"
}

// SplitWarning is the paragraph every report of a run that did not read
// the test split opens with: numbers measured on training data say how
// well a policy fits what it was trained on, not how good it is.
func SplitWarning(split string) string {
	switch split {
	case "", env.SplitTest:
		return ""
	case env.SplitTrain:
		return "> **Not an evaluation: this run read the train split**, the rows trainers are served. A policy trained on them is scored on its own training data here; evaluate on the test split (`--split test`, the default).\n\n"
	}
	return "> **Not an evaluation: this run read the " + split + " split.** The evaluation set is the test split (`--split test`, the default).\n\n"
}

// GroupBy partitions row positions by a meta field's value; rows without
// it go under "(none)". Groups come back sorted by name.
func GroupBy(rows []artifact.Result, positions []int, field string) (names []string, groups map[string][]int) {
	groups = map[string][]int{}
	seen := false
	for _, p := range positions {
		v, ok := rows[p].Meta[field]
		name := "(none)"
		if ok && v != nil {
			name = fmt.Sprint(v)
			seen = true
		}
		groups[name] = append(groups[name], p)
	}
	if !seen {
		return nil, nil
	}
	names = slices.Sorted(maps.Keys(groups))
	return names, groups
}

// RewardStats averages reward and each component over row positions.
func RewardStats(rows []artifact.Result, positions []int) (mean float64, comps map[string]float64) {
	comps = map[string]float64{}
	counts := map[string]int{}
	for _, p := range positions {
		mean += rows[p].Reward
		for k, v := range rows[p].Components {
			comps[k] += v
			counts[k]++
		}
	}
	mean = metrics.Div(mean, float64(len(positions)))
	for k := range comps {
		comps[k] /= float64(counts[k])
	}
	return mean, comps
}
