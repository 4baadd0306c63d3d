package rewardsagree

import (
	"fmt"
	"slices"
	"strings"

	"github.com/svbench/svbench/env/judgeutil"
	"github.com/svbench/svbench/metrics"
)

// Markdown renders the report for reading.
func Markdown(r *Report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Reward sources: %s\n\n", r.Environment)
	fmt.Fprintf(&b, "Run `%s` · model `%s` · rubric `%s` · judge `%s` · run status %s\n\n", r.Run, r.Model, r.Rubric, r.JudgeModel, orNone(r.RunStatus))
	fmt.Fprintf(&b, "%d rows: %d without a model answer, %d scored by all three sources", r.Rows, r.ModelErrors, r.Scored)
	if r.JudgeFailures > 0 {
		fmt.Fprintf(&b, "; **%d rows where the judge gave no verdict** (left out, never counted as \"no\")", r.JudgeFailures)
	}
	b.WriteString(".\n")
	for _, s := range Sources {
		if n := r.ScoreErrors[s]; n > 0 {
			fmt.Fprintf(&b, "- %s could not score %d rows\n", s, n)
		}
	}
	b.WriteString("\n## Budget parity\n\n")
	b.WriteString(r.Budget.Note + ".\n\n")
	if len(r.Budget.Fields) > 0 {
		b.WriteString("| field | value |\n|---|---|\n")
		for _, f := range BudgetFields {
			fmt.Fprintf(&b, "| %s | %s |\n", f, cell(r.Budget.Fields[f]))
		}
	}
	if r.Scored == 0 {
		b.WriteString("\nNo row was scored by every source: nothing to compare.\n")
		writeCost(&b, r)
		return b.String()
	}
	b.WriteString("\n## Sources\n\nPass: solved for executable, judge said yes for llm_judge, both for hybrid. 95% bootstrap intervals.\n\n")
	b.WriteString("| source | mean reward | 95% CI | pass rate | 95% CI | reward range |\n|---|---:|---|---:|---|---|\n")
	for _, s := range r.Sources {
		fmt.Fprintf(&b, "| %s | %.4f | %s | %.3f | %s | [%.3g, %.3g] |\n", s.Source, s.Reward.Point, ci(s.Reward), s.PassRate.Point, ci(s.PassRate), s.Min, s.Max)
	}
	fmt.Fprintf(&b, "\n## Agreement\n\nPer-row agreement: rewards min–max scaled to [0, 1] over the scored rows differ by at most %.3g.\n\n", r.Tolerance)
	b.WriteString("| sources | Pearson | Spearman | agreement | mean \\|Δ\\| (scaled) |\n|---|---:|---:|---:|---:|\n")
	for _, p := range r.Pairs {
		fmt.Fprintf(&b, "| %s vs %s | %s | %s | %.3f | %.3f |\n", p.A, p.B, opt(p.Pearson), opt(p.Spearman), p.Agreement, p.MeanAbsDiff)
	}
	c := r.Solved
	b.WriteString("\n## Verifier × judge\n\n| | judge yes | judge no |\n|---|---:|---:|\n")
	fmt.Fprintf(&b, "| solved | %d | %d |\n| not solved | %d | %d |\n\n", c.BothPass, c.VerifierOnly, c.JudgeOnly, c.Neither)
	fmt.Fprintf(&b, "Agreement %.3f, Cohen's κ %s. %d disagreements", c.Agreement, opt(c.Kappa), r.Disagreements)
	if r.DisagreementsFile != "" {
		fmt.Fprintf(&b, " written to `%s` (judge-only passes first)", r.DisagreementsFile)
	}
	b.WriteString(".\n")
	writeQuality(&b, r.Quality)
	if len(r.Labels) > 0 {
		b.WriteString("\n## By gold and predicted label\n\n| gold | predicted | n | solved | judge yes | mean executable | mean hybrid |\n|---|---|---:|---:|---:|---:|---:|\n")
		labels := slices.Clone(r.Labels)
		for _, l := range labels {
			fmt.Fprintf(&b, "| %s | %s | %d | %.3f | %.3f | %.3f | %.3f |\n", cell(l.Gold), cell(l.Predicted), l.N, l.Solved, l.JudgeYes, l.Executable, l.Hybrid)
		}
	}
	writeCost(&b, r)
	return b.String()
}

// writeQuality renders each source's precision and recall against the
// executable verdict.
func writeQuality(b *strings.Builder, qs []metrics.VerdictQuality) {
	if len(qs) == 0 {
		return
	}
	b.WriteString("\n## Reward quality against the executable verdict\n\n")
	b.WriteString("Ground truth: the executable source's solved. A source's false positives are the rollouts it pays for and the verifier does not: what a policy trained on it learns to produce. Precision = TP/(TP+FP), recall = TP/(TP+FN), Wilson 95% intervals (rows treated as independent); n/a when undefined.\n\n")
	b.WriteString("| source | positive verdict | TP | FP | FN | TN | precision [95% CI] | recall [95% CI] | first false positives |\n|---|---|---:|---:|---:|---:|---|---|---|\n")
	for _, q := range qs {
		fps := "—"
		if len(q.FalsePositives) > 0 {
			fps = cell(strings.Join(q.FalsePositives, ", "))
		}
		fmt.Fprintf(b, "| %s | %s | %d | %d | %d | %d | %s | %s | %s |\n", q.Source, q.Positive, q.TP, q.FP, q.FN, q.TN, q.Precision, q.Recall, fps)
	}
}

func writeCost(b *strings.Builder, r *Report) {
	c := r.Cost
	fmt.Fprintf(b, "\n## Judge cost\n\n%d calls sent (%d failed), %d answered from the cache (%d cached answers loaded); %d prompt + %d completion tokens",
		c.Calls, c.Errors, c.Hits, c.Loaded, c.Usage.PromptTokens, c.Usage.CompletionTokens)
	if c.Usage.ReasoningTokens > 0 {
		fmt.Fprintf(b, " (%d reasoning)", c.Usage.ReasoningTokens)
	}
	b.WriteString(". Re-running the study asks only what the cache lacks.\n")
	fmt.Fprintf(b, "\nThe %s source's judge component is named `%s`; hybrid keeps every executable component under its rubric name.\n", judgeutil.SourceJudge, judgeutil.Component)
}

func ci(c metrics.CI) string { return fmt.Sprintf("[%.3f, %.3f]", c.Lo, c.Hi) }

func opt(p *float64) string {
	if p == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", *p)
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	return strings.ReplaceAll(s, "\n", " ")
}
