package leaderboard

import (
	"slices"

	"github.com/svbench/svbench/report"
)

// modelTable is the leaderboard's entries as report.BuildModelTable reads
// them: one row per model, one column per environment (and condition),
// each cell the entry's main metric with its interval and its grade.
func modelTable(entries []Entry) *report.ModelTable {
	var in []report.ModelTableEntry
	for _, e := range entries {
		te := report.ModelTableEntry{Env: e.Env, Model: e.Model, Condition: e.Condition, N: e.Scored, RunID: e.RunID, Dir: e.Dir, Grade: e.Grade,
			Metric: report.KeyMetric{Name: e.MainMetric, HigherIsBetter: e.HigherIsBetter}}
		v, ok := e.Metrics[e.MainMetric]
		te.Value, te.Undefined = v, !ok || slices.Contains(e.Undefined, e.MainMetric)
		if ci, ok := e.CI[e.MainMetric]; ok {
			te.CI = &ci
		}
		if e.meta != nil {
			te.Rubric = e.meta.RubricInfo
		}
		in = append(in, te)
	}
	return report.BuildModelTable(in)
}
