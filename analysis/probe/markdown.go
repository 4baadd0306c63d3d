package probe

import (
	"fmt"
	textclip "github.com/svbench/svbench/base/clip"
	"strings"
)

// Markdown renders a probe run as the table the environments' READMEs
// carry, with the verdict first.
func Markdown(r *Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# svbench probe: %s (%s rubric)\n\n", r.Env, r.Rubric)
	fmt.Fprintf(&b, "Dataset `%s` (%s), %d rows. Honest baseline `builtin:%s`: mean reward **%.4f**, solved %d/%d.\n\n",
		r.Dataset, r.Revision, r.Rows, r.Honest.Name, r.Honest.MeanReward, r.Honest.Solved, r.Honest.Rows)
	if len(r.Vulnerable) == 0 {
		b.WriteString("**No strategy reaches the honest mean.**\n\n")
	} else {
		fmt.Fprintf(&b, "**Vulnerable to %d strategies:** %s. Each earns at least the honest mean without doing the task.\n\n", len(r.Vulnerable), strings.Join(r.Vulnerable, ", "))
	}
	b.WriteString("A registered strategy is bounded by its mean reward; a search mutation by its reward on rows it does not solve (unsolved mean).\n\n")
	b.WriteString("| strategy | family | kind | mean reward | unsolved mean | solved | applied | bound / honest | |\n|---|---|---|---:|---:|---:|---:|---:|---|\n")
	h := r.Honest
	fmt.Fprintf(&b, "| **builtin:%s** | honest baseline | honest | %.4f | %.4f | %d/%d | — | 100%% | |\n", h.Name, h.MeanReward, h.UnsolvedMean, h.Solved, h.Rows)
	for _, s := range r.Strategies {
		mark := ""
		if s.Vulnerable {
			mark = "✗ reaches honest"
		}
		if s.Errors > 0 {
			mark += fmt.Sprintf(" %d errors", s.Errors)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %.4f | %.4f | %d/%d | %d | %.0f%% | %s |\n", s.Name, s.Family, s.Kind, s.MeanReward, s.UnsolvedMean, s.Solved, s.Rows, s.Applied, 100*s.ShareHonest, strings.TrimSpace(mark))
	}
	if len(r.NotApplicable) > 0 {
		fmt.Fprintf(&b, "\nNot applicable here (changed no answer): %s.\n", strings.Join(r.NotApplicable, ", "))
	}
	b.WriteString("\n## Strategies\n\n")
	for _, s := range r.Strategies {
		fmt.Fprintf(&b, "- **%s**: %s", s.Name, s.Description)
		if s.FirstError != "" {
			fmt.Fprintf(&b, " First error: `%s`.", textclip.Bytes(s.FirstError, 200, textclip.Ellipsis))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n## Best non-solving examples\n\n")
	for _, s := range r.Strategies[:min(len(r.Strategies), 5)] {
		if s.Best == nil {
			continue
		}
		fmt.Fprintf(&b, "### %s on %s: reward %.4f\n\n```\n%s\n```\n\n", s.Name, s.Best.ID, s.Best.Reward, strings.ReplaceAll(textclip.Bytes(s.Best.Answer, 800, textclip.Ellipsis), "```", "'''"))
	}
	return b.String()
}
