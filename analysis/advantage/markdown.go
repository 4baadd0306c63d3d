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
	fmt.Fprintf(&b, "\n\nAdvantages below are computed as TRL's GRPOTrainer computes them (convention %s: sample std with Bessel's correction, ε = 1e-4, unscored rewards left out and given 0): grpo is scale_rewards=\"none\", grpo_std scale_rewards=\"group\", gdpo multi_objective_aggregation=\"normalize_then_sum\" with the batch = one training step, per_component that before the batch step.", r.Convention)
	if r.Unscored > 0 {
		fmt.Fprintf(&b, " %d rollouts were unscored (no reward function scored them).", r.Unscored)
	}
	b.WriteString("\n\n## Zero-variance groups\n\nShare of groups in which the value does not vary (or fewer than two rollouts scored it): no spread to normalise.\n\n")
	rows := [][]string{{"summed reward", report.Pct(r.ZeroVariance.Reward)}}
	for _, n := range r.Names {
		rows = append(rows, []string{n, report.Pct(r.ZeroVariance.Components[n])})
	}
	b.WriteString(report.Table([]string{"quantity", "zero-variance groups"}, rows))
	fmt.Fprintf(&b, "\n%s of groups have a constant summed reward while a component varies. Filtering groups on the summed reward's variance (dynamic sampling, dropping TRL's frac_reward_zero_std groups) drops exactly these groups, the ones GDPO's per-component normalisation exists to keep.\n", report.Pct(r.ZeroVariance.RewardOnly))
	b.WriteString("\n## Collapsed groups\n\nShare of groups in which every rollout gets advantage 0, i.e. no learning signal.\n\n")
	rows = nil
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
		b.WriteString("\n## The trainer's recorded advantages\n\nEach trainer setting's advantages, recomputed with its std, ε and rules for unscored rewards and one-rollout groups, against the recorded ones.\n\n")
		rows = nil
		for _, c := range rr.Candidates {
			undef := ""
			if u := rr.Undefined[c.Name]; u > 0 {
				undef = fmt.Sprint(u)
			}
			rows = append(rows, []string{c.Name, c.Setting, fmt.Sprintf("%.3g", rr.MaxAbsDiff[c.Name]), undef})
		}
		b.WriteString(report.Table([]string{"scheme@convention", "trainer setting", "max |recorded − recomputed|", "rollouts it gives no advantage"}, rows))
		switch len(rr.Reproduces) {
		case 0:
			fmt.Fprintf(&b, "\nNo trainer setting reproduces the %d recorded advantages within %g·max(1, |advantage|) (the trainer may use other weights, clip, shape the reward with a KL term, or batch differently than one step).\n", rr.Rollouts, rr.Tolerance)
		case 1:
			fmt.Fprintf(&b, "\nReproduced (within %g·max(1, |advantage|) on all %d rollouts) by %s.\n", rr.Tolerance, rr.Rollouts, rr.Reproduces[0])
		default:
			fmt.Fprintf(&b, "\nReproduced (within %g·max(1, |advantage|) on all %d rollouts) by %s, closest first: these rows do not tell those settings apart.\n", rr.Tolerance, rr.Rollouts, strings.Join(rr.Reproduces, ", "))
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
