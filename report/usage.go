package report

import (
	"fmt"
	"strings"

	"github.com/svbench/svbench/artifact"
)

// usageSection is report.md's account of the run's model calls by role and
// model, priced when the run had --prices; "" when the metadata has none.
func usageSection(meta *artifact.Metadata) string {
	if meta == nil || len(meta.UsageByModel) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n## Tokens and cost\n\n")
	header := []string{"role", "model", "calls", "cached", "failed", "prompt tokens", "completion tokens", "reasoning tokens"}
	if meta.Cost != nil {
		header = append(header, "cost ("+meta.Cost.Currency+")")
	}
	var rows [][]string
	for _, u := range meta.UsageByModel {
		row := []string{u.Role, EscapeCell(u.Model), fmt.Sprint(u.Calls), fmt.Sprint(u.CachedCalls), fmt.Sprint(u.Errors),
			fmt.Sprint(u.Usage.PromptTokens), fmt.Sprint(u.Usage.CompletionTokens), fmt.Sprint(u.Usage.ReasoningTokens)}
		if meta.Cost != nil {
			if u.Cost != nil {
				row = append(row, costCell(*u.Cost))
			} else {
				row = append(row, "no price")
			}
		}
		rows = append(rows, row)
	}
	b.WriteString(Table(header, rows))
	b.WriteString("\nEvery call the run made, retried and failed rows included; cached calls were replayed from `--cache` and cost nothing this time.\n")
	if c := meta.Cost; c != nil {
		fmt.Fprintf(&b, "\nTotal cost **%s** at the prices of %s (`%s`). Prices go stale: check the date.\n", EscapeCell(CostText(c)), c.PricesDate, EscapeCell(c.PricesFile))
	}
	return b.String()
}

// CostText is a run's total cost as every report, the scoreboard, the CLI
// and the dashboard show it. A model with usage but no price is unknown,
// not free: with nothing priced the cost is "unknown", with part of the
// usage priced the total is a lower bound ("≥"); either way the unpriced
// models are named. "" for nil (the run had no --prices).
func CostText(c *artifact.Cost) string {
	if c == nil {
		return ""
	}
	amount := costCell(c.Total) + " " + c.Currency
	if len(c.Unpriced) == 0 {
		return amount
	}
	missing := "no price for " + strings.Join(c.Unpriced, ", ")
	if c.Total == 0 {
		return "unknown (" + missing + ")"
	}
	return "≥ " + amount + " (" + missing + ")"
}

func costCell(v float64) string {
	if v != 0 && v < 0.01 {
		return fmt.Sprintf("%.6f", v)
	}
	return fmt.Sprintf("%.4f", v)
}
