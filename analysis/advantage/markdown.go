package advantage

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/report"
)

// Markdown renders the report for reading.
func (r *Report) Markdown(ld *Loaded) string {
	var b strings.Builder
	b.WriteString("# Multi-reward advantage analysis\n\n")
	fmt.Fprintf(&b, "%d groups (%s) with %d rollouts; %d single-rollout groups left out", r.Groups, ld.GroupedBy, r.Rollouts, r.Singletons)
	if ld.Skipped > 0 {
		fmt.Fprintf(&b, "; %d rows without components skipped", ld.Skipped)
	}
	b.WriteString(".\n\n")
	var w []string
	for k, n := range r.Names {
		w = append(w, fmt.Sprintf("%s %s", n, report.F(r.Weights[k])))
	}
	fmt.Fprintf(&b, "Weights (%s): %s.", ld.WeightsFrom, strings.Join(w, ", "))
	if ld.WeightsFrom == "fitted" {
		fmt.Fprintf(&b, " Fitted by least squares on the recorded rewards; largest residual %.3g.", ld.FitMaxResidual)
	}
	b.WriteString("\n\n## Collapsed groups\n\nShare of groups in which every rollout gets advantage 0, i.e. no learning signal.\n\n")
	var rows [][]string
	for _, s := range Schemes {
		rows = append(rows, []string{s, report.Pct(r.Schemes[s].CollapsedGroups)})
	}
	b.WriteString(report.Table([]string{"scheme", "collapsed groups"}, rows))
	b.WriteString("\n## Which component decides the sign\n\nFor rollouts with a non-zero GRPO advantage: the component whose weighted deviation from its group mean agrees with the advantage's sign and is largest.\n\n")
	rows = nil
	total := 0
	for _, n := range r.Names {
		total += r.Deciders[n]
	}
	for _, n := range r.Names {
		share := 0.0
		if total > 0 {
			share = float64(r.Deciders[n]) / float64(total)
		}
		rows = append(rows, []string{n, fmt.Sprint(r.Deciders[n]), report.Pct(share)})
	}
	b.WriteString(report.Table([]string{"component", "rollouts", "share"}, rows))
	b.WriteString("\n## Rank correlation of each scheme's advantage with each component (Spearman)\n\n")
	b.WriteString(r.schemeTable(func(s SchemeReport, n string) string { return report.F(s.Spearman[n]) }))
	b.WriteString("\n## Sensitivity to the weights\n\nShare of rollouts whose advantage changes sign when one component's weight moves by ±20%.\n\n")
	b.WriteString(r.schemeTable(func(s SchemeReport, n string) string { return report.Pct(s.Sensitivity[n]) }))
	if rr := r.Recorded; rr != nil {
		b.WriteString("\n## The trainer's recorded advantages\n\n")
		rows = nil
		for _, s := range Schemes {
			rows = append(rows, []string{s, fmt.Sprintf("%.3g", rr.MaxAbsDiff[s])})
		}
		b.WriteString(report.Table([]string{"scheme", "max |recorded − scheme|"}, rows))
		if len(rr.Reproduces) > 0 {
			fmt.Fprintf(&b, "\nReproduced (within %g on all %d rollouts) by: %s.\n", rr.Tolerance, rr.Rollouts, strings.Join(rr.Reproduces, ", "))
		} else {
			fmt.Fprintf(&b, "\nNo scheme reproduces the %d recorded advantages within %g (the trainer may normalise over the batch, clip, or use other weights).\n", rr.Rollouts, rr.Tolerance)
		}
	}
	return b.String()
}

func (r *Report) schemeTable(cell func(SchemeReport, string) string) string {
	header := append([]string{"scheme"}, r.Names...)
	var rows [][]string
	for _, s := range Schemes {
		row := []string{s}
		for _, n := range r.Names {
			row = append(row, cell(r.Schemes[s], n))
		}
		rows = append(rows, row)
	}
	return report.Table(header, rows)
}
