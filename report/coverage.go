package report

import (
	"fmt"

	"github.com/svbench/svbench/artifact"
)

// coverage states what share of the attempted rows the model answered,
// beside the metrics. Rows without an answer count in every metric above,
// scored as no answer by the environment's rule: unanswered rows (the
// server refused the row's request for its length) and rows whose model
// call failed and were scored as they stood (artifact.Result.FailedButScored). Leaving them
// out would score a model with a shorter context, or a flakier endpoint, on
// the rows that remain. Beside the headline stands the answered-only view:
// the builder's key metrics over the answered rows alone, with their n.
// Error rows never scored (written before the runner scored them) are left
// out and said. It is nil for a run where every row was answered.
func coverage(rows, builderRows []artifact.Result, b Builder, meta *artifact.Metadata, keys []KeyMetric) (map[string]any, Stat, string) {
	var unanswered, apiErrors, apiExcluded int
	for i := range rows {
		switch {
		case rows[i].Unanswered != "":
			unanswered++
		case rows[i].FailedButScored():
			apiErrors++
		case rows[i].Error != "":
			apiExcluded++
		}
	}
	if unanswered+apiErrors+apiExcluded == 0 {
		return nil, Stat{}, ""
	}
	attempted := len(rows)
	answered := attempted - unanswered - apiErrors - apiExcluded
	cov := map[string]any{"attempted_rows": attempted, "answered_rows": answered, "unanswered_rows": unanswered, "api_error_rows": apiErrors}
	if apiExcluded > 0 {
		cov["api_error_rows_excluded"] = apiExcluded
	}
	text := fmt.Sprintf("answered %d of %d attempted rows (%.1f%%)", answered, attempted, 100*float64(answered)/float64(attempted))
	md := "\n## Coverage\n\n" + text + "."
	if unanswered > 0 {
		text += fmt.Sprintf("; %d unanswered (prompt + max_tokens over the model's context), scored as no answer", unanswered)
		md += fmt.Sprintf(" %d row(s) were refused by the server for their length (prompt + max_tokens over the model's context window): they are scored as no answer by this environment's rule and counted in every metric above, so a shorter context costs score instead of leaving the hard rows out. Rows with `unanswered` in results.jsonl carry the server's message.", unanswered)
	}
	if apiErrors > 0 {
		text += fmt.Sprintf("; %d with API errors, scored as no answer (svbench eval --resume retries them)", apiErrors)
		md += fmt.Sprintf(" %d row(s) failed with an API error after the client's retries: they are scored as no answer and counted in every metric above until `svbench eval --resume` retries them.", apiErrors)
	}
	if apiExcluded > 0 {
		text += fmt.Sprintf("; %d with API errors never scored, left out (svbench eval --resume retries them)", apiExcluded)
		md += fmt.Sprintf(" %d row(s) failed with an API error and were never scored (written before svbench scored failed calls): they are left out of the metrics until `svbench eval --resume` retries them.", apiExcluded)
	}
	md += "\n"
	if unanswered+apiErrors == 0 {
		// Every counted row was answered: the view would repeat the headline.
		return cov, Stat{Name: "coverage", Value: text}, md
	}
	counted := 0
	for i := range builderRows {
		if _, excluded := ExcludedRow(i, &builderRows[i]); !excluded {
			counted++
		}
	}
	if view, line, table := answeredOnly(builderRows, b, meta, keys, counted); view != nil {
		cov["answered_only"] = view
		text += "; " + line
		md += table
	}
	return cov, Stat{Name: "coverage", Value: text}, md
}

// answeredOnly is the view beside the headline: the builder run again on
// the answered rows alone (no bootstrap), its key metrics set against the
// headline's, which count every attempted row. counted is the number of
// rows the headline counts.
func answeredOnly(builderRows []artifact.Result, b Builder, meta *artifact.Metadata, keys []KeyMetric, counted int) (map[string]any, string, string) {
	if len(keys) == 0 {
		return nil, "", ""
	}
	var only []artifact.Result
	for i := range builderRows {
		if r := &builderRows[i]; r.Unanswered == "" && r.Error == "" {
			only = append(only, *r)
		}
	}
	const head = "\n### Answered rows only\n\n"
	if len(only) == 0 {
		return map[string]any{"rows": 0}, "no answered rows", head + "No row was answered: there is no answered-only view.\n"
	}
	ro, err := b(only, meta, Options{BootstrapReps: -1})
	if err != nil || len(ro.Key) == 0 {
		return nil, "", ""
	}
	byName := map[string]KeyMetric{}
	for _, k := range ro.Key {
		byName[k.Name] = k
	}
	val := func(k KeyMetric) string {
		if k.Undefined {
			return "n/a"
		}
		return F(k.Value)
	}
	var tr [][]string
	var view []KeyMetric
	for _, k := range keys {
		a, ok := byName[k.Name]
		if !ok {
			continue
		}
		a.Lo, a.Hi = nil, nil
		view = append(view, a)
		tr = append(tr, []string{EscapeCell(k.Name), val(k), val(a)})
	}
	if len(view) == 0 {
		return nil, "", ""
	}
	line := fmt.Sprintf("answered rows only: %s %s (n = %d)", view[0].Name, val(view[0]), len(only))
	table := head + fmt.Sprintf("The same metrics over the %d answered row(s) alone, beside the headline's over all %d counted rows. The headline is the score: this view only shows what the unanswered rows cost.\n\n", len(only), counted) +
		Table([]string{"metric", fmt.Sprintf("all counted rows (n = %d)", counted), fmt.Sprintf("answered rows only (n = %d)", len(only))}, tr)
	return map[string]any{"rows": len(only), "key_metrics": view}, line, table
}
