package leaderboard

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/report"
)

// Markdown renders leaderboard.md: one table per environment and
// condition, best first, each metric with its 95% interval when the run
// has one.
func (lb *Leaderboard) Markdown() string {
	var b strings.Builder
	b.WriteString("# svbench leaderboard\n\n")
	if len(lb.Entries) == 0 {
		b.WriteString("_No runs found._\n")
	}
	for i := 0; i < len(lb.Entries); {
		j := i
		for j < len(lb.Entries) && lb.Entries[j].Env == lb.Entries[i].Env && lb.Entries[j].Condition == lb.Entries[i].Condition {
			j++
		}
		group := lb.Entries[i:j]
		var cols []report.KeyMetric
		for _, e := range group {
			if len(e.order) > len(cols) {
				cols = e.order
			}
		}
		header := []string{"#", "model", "run", "grade", "examples × rollouts", "scored", "status"}
		for k, c := range cols {
			name := c.Name
			if k == 0 {
				name = "**" + name + "**"
			}
			if !c.HigherIsBetter {
				name += " ↓"
			}
			header = append(header, name)
		}
		header = append(header, "evidence")
		var rows [][]string
		for _, e := range group {
			// Cells are escaped once, by report.Table.
			rank := "—"
			if e.Rank > 0 {
				rank = fmt.Sprint(e.Rank)
			}
			cells := []string{rank, e.Model, e.RunID, e.Grade, fmt.Sprintf("%d × %d", e.Examples, e.Rollouts), fmt.Sprint(e.Scored), e.Status}
			for _, c := range cols {
				v, ok := e.Metrics[c.Name]
				switch {
				case slices.Contains(e.Undefined, c.Name):
					cells = append(cells, "n/a")
				case !ok:
					cells = append(cells, "—")
				case e.CI != nil && e.CI[c.Name] != [2]float64{}:
					ci := e.CI[c.Name]
					cells = append(cells, fmt.Sprintf("%s [%s, %s]", report.F(v), report.F(ci[0]), report.F(ci[1])))
				default:
					cells = append(cells, report.F(v))
				}
			}
			cells = append(cells, e.Why)
			rows = append(rows, cells)
		}
		fmt.Fprintf(&b, "## %s · %s\n\n", group[0].Env, report.EscapeCell(group[0].Condition))
		if ds := datasets(group); ds != "" {
			fmt.Fprintf(&b, "Dataset: %s\n\n", ds)
		}
		b.WriteString(report.Table(header, rows) + "\n")
		i = j
	}
	b.WriteString("Evidence grades — " + GradeRule + " Entries are ranked by grade, then by the main metric within a grade; grade D entries are listed unranked (—). [lo, hi] is a 95% interval, a percentile cluster bootstrap over examples (all rollouts of a drawn example together; — when the run's summary has none); ↓ marks metrics better when lower; n/a marks a metric the run cannot define. One entry per (model, environment, condition): the run with the most scored rows, then the newest.\n")
	if lb.Models != nil && len(lb.Models.Columns) > 1 {
		b.WriteString("\n" + lb.Models.Markdown("Models across environments") + "A grade in parentheses is the entry's evidence grade.\n")
	}
	if len(lb.Skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, s := range lb.Skipped {
			fmt.Fprintf(&b, "- %s\n", report.EscapeCell(s))
		}
	}
	return b.String()
}

func datasets(group []Entry) string {
	var out []string
	for _, e := range group {
		d := e.Dataset
		if e.DatasetRev != "" {
			d += " (" + e.DatasetRev + ")"
		}
		if d != "" && !slices.Contains(out, d) {
			out = append(out, d)
		}
	}
	return report.EscapeCell(strings.Join(out, ", "))
}

// Write writes leaderboard.json and leaderboard.md into dir.
func Write(dir string, lb *Leaderboard) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, "leaderboard.json"), lb); err != nil {
		return fmt.Errorf("write leaderboard.json: %w", err)
	}
	if err := artifact.WriteFileAtomic(filepath.Join(dir, "leaderboard.md"), []byte(lb.Markdown())); err != nil {
		return fmt.Errorf("write leaderboard.md: %w", err)
	}
	return nil
}
