package report

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
)

// ScoreRow is one run on the scoreboard.
type ScoreRow struct {
	Env        string `json:"env"`
	Model      string `json:"model"`
	Dataset    string `json:"dataset"`
	DatasetRev string `json:"dataset_revision"`
	RunID      string `json:"run_id"`
	Dir        string `json:"dir"`
	N          int    `json:"n"`
	Status     string `json:"status"`
	Rubric     string `json:"rubric,omitempty"`
	// Params are the parameters in force that differ from the
	// environment's defaults (artifact.Metadata.ChangedParams).
	Params map[string]string `json:"params,omitempty"`
	// Labels name what the run's configuration makes its numbers mean
	// (Spec.Labels: "simulated target"); part of its condition.
	Labels []string `json:"labels,omitempty"`
	// Source is "" for svbench's runs and "trainer:<kind>" for a trainer's
	// rollouts that svbench re-scored.
	Source     string             `json:"source,omitempty"`
	Date       time.Time          `json:"date"`
	MainMetric string             `json:"main_metric,omitempty"`
	Metrics    map[string]float64 `json:"metrics"`
	// CI holds 95% intervals of the metrics that have one.
	CI map[string][2]float64 `json:"ci,omitempty"`
	// Undefined lists metrics the run cannot define (no positives, nothing
	// decided, …): shown as n/a and ranked last, never as 0.
	Undefined   []string    `json:"undefined,omitempty"`
	Order       []KeyMetric `json:"-"`
	SummaryNote string      `json:"summary_note,omitempty"`
	// Tokens is every token the run's model calls used (all roles); Cost
	// and Currency price them when the run had --prices.
	// Cost is nil when nothing was priced; CostUnpriced names the models
	// with usage but no price (Cost, when set, is then a lower bound).
	Tokens       int64    `json:"tokens,omitempty"`
	Cost         *float64 `json:"cost,omitempty"`
	Currency     string   `json:"currency,omitempty"`
	CostUnpriced []string `json:"cost_unpriced_models,omitempty"`
	// RubricInfo is the run's declared rubric (metadata.json), nil for runs
	// from before it was recorded.
	RubricInfo *env.RubricInfo `json:"rubric_info,omitempty"`
}

// Scoreboard is scoreboard.json.
type Scoreboard struct {
	Root string     `json:"root"`
	Runs []ScoreRow `json:"runs"`
	// Unranked are runs that did not complete (interrupted, stopped on
	// errors, failed, still running): listed with their status, never
	// ranked, since a 4-row fragment or a 0-row failure would otherwise
	// outrank or hide a complete run.
	Unranked []ScoreRow `json:"unranked,omitempty"`
	Skipped  []string   `json:"skipped,omitempty"`
	// Models is one row per model, one column per environment: each
	// environment's main metric with its interval and the reward range
	// its rubric declares (BuildModelTable over the ranked runs).
	Models *ModelTable `json:"models_by_env,omitempty"`
}

// ScoreboardOptions select runs.
type ScoreboardOptions struct {
	Env string // canonical id; "" = every env
	All bool   // keep every run, not only the latest per key (see Condition)
	// LoadTrainerRun builds the report of a directory holding a trainer's
	// rollouts (run_manifest.json, no metadata.json). Re-scoring needs the
	// environments, which this package does not link, so the caller
	// supplies it; nil skips such directories.
	LoadTrainerRun func(dir string) (*Report, *artifact.Metadata, error)
}

// trainerManifest is the reference's run manifest file name.
const trainerManifest = "run_manifest.json"

// CollectScoreboard walks root for run directories: svbench's (holding
// metadata.json) and, when opts.LoadTrainerRun is set, a trainer's (holding
// run_manifest.json beside its rollouts). A run's summary.json is used when it is at least as new
// as its results; otherwise the summary is computed in memory (run
// directories are never written). Runs that cannot be read are listed in
// Skipped with the reason, not fatal: one broken run must not hide the rest.
func CollectScoreboard(root string, opts ScoreboardOptions) (*Scoreboard, error) {
	sb := &Scoreboard{Root: root}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		dir := filepath.Dir(p)
		var row *ScoreRow
		switch d.Name() {
		case artifact.MetadataFile:
			row, err = scoreRun(dir)
		case trainerManifest:
			if _, serr := os.Stat(filepath.Join(dir, artifact.MetadataFile)); serr == nil || opts.LoadTrainerRun == nil {
				return nil // an svbench run (scored above) or nothing to load it with
			}
			row, err = scoreTrainerRun(dir, opts.LoadTrainerRun)
		default:
			return nil
		}
		if err != nil {
			sb.Skipped = append(sb.Skipped, fmt.Sprintf("%s: %v", dir, err))
			return nil
		}
		if opts.Env == "" || row.Env == opts.Env {
			sb.Runs = append(sb.Runs, *row)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	var ranked []ScoreRow
	for _, r := range sb.Runs {
		if r.Status == artifact.StatusCompleted && r.N > 0 {
			ranked = append(ranked, r)
		} else {
			sb.Unranked = append(sb.Unranked, r)
		}
	}
	sb.Runs = ranked
	if !opts.All {
		sb.Runs = bestRuns(sb.Runs)
	}
	sortScoreRows(sb.Runs)
	var entries []ModelTableEntry
	for _, r := range sb.Runs {
		entries = append(entries, EntryFromScoreRow(r))
	}
	sb.Models = BuildModelTable(entries)
	sort.SliceStable(sb.Unranked, func(i, j int) bool {
		a, b := sb.Unranked[i], sb.Unranked[j]
		if a.Env != b.Env {
			return a.Env < b.Env
		}
		return a.Date.After(b.Date)
	})
	return sb, nil
}

func scoreRun(dir string) (*ScoreRow, error) {
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		return nil, err
	}
	env, err := Resolve(meta.Environment)
	if err != nil {
		return nil, err
	}
	row := newScoreRow(env, dir, meta)
	summary, err := freshSummary(dir, env)
	if err != nil {
		return nil, err
	}
	if summary == nil {
		rep, err := FromRun(dir, env, Options{BootstrapReps: -1})
		if err != nil {
			return nil, err
		}
		if summary, err = json.Marshal(rep.Summary); err != nil {
			return nil, err
		}
		row.SummaryNote = "computed (no up-to-date summary.json)"
	}
	return row, row.fillFromSummary(summary)
}

func newScoreRow(env, dir string, meta *artifact.Metadata) *ScoreRow {
	row := &ScoreRow{
		Env: env, Model: meta.Model, Dataset: meta.Dataset, DatasetRev: meta.DatasetRev, RunID: meta.RunID,
		Dir: dir, Status: meta.Status, Date: meta.Started, Metrics: map[string]float64{},
		Rubric: meta.Rubric, Params: meta.ChangedParams(), Labels: ConditionLabels(meta), Source: meta.Source,
	}
	row.RubricInfo = meta.RubricInfo
	for _, u := range meta.UsageByModel {
		row.Tokens += u.Usage.PromptTokens + u.Usage.CompletionTokens
	}
	if c := meta.Cost; c != nil {
		row.Currency, row.CostUnpriced = c.Currency, c.Unpriced
		if c.Total != 0 || len(c.Unpriced) == 0 { // unknown is not zero
			total := c.Total
			row.Cost = &total
		}
	}
	return row
}

// scoreTrainerRun ranks a trainer's run directory by re-scoring it.
func scoreTrainerRun(dir string, load func(string) (*Report, *artifact.Metadata, error)) (*ScoreRow, error) {
	rep, meta, err := load(dir)
	if err != nil {
		return nil, err
	}
	env, err := Resolve(meta.Environment)
	if err != nil {
		return nil, err
	}
	row := newScoreRow(env, dir, meta)
	summary, err := json.Marshal(rep.Summary)
	if err != nil {
		return nil, err
	}
	row.SummaryNote = "trainer rollouts re-scored with the " + meta.Rubric + " rubric"
	return row, row.fillFromSummary(summary)
}

func (row *ScoreRow) fillFromSummary(summary json.RawMessage) error {
	var keys struct {
		N      int         `json:"n_rows"`
		Key    []KeyMetric `json:"key_metrics"`
		Counts struct {
			Scored *int `json:"scored"`
		} `json:"counts"`
		Bootstrap struct {
			Method string `json:"method"`
		} `json:"bootstrap"`
	}
	if err := json.Unmarshal(summary, &keys); err != nil {
		return fmt.Errorf("summary.json: %w", err)
	}
	row.N = keys.N
	if keys.Counts.Scored != nil {
		row.N = *keys.Counts.Scored
	}
	row.Order = keys.Key
	// A summary.json written before intervals resampled examples carries
	// row-bootstrap intervals, too narrow with several rollouts per
	// example: they are left out rather than shown beside current ones.
	stale := keys.Bootstrap.Method != "" && keys.Bootstrap.Method != BootstrapMethod
	if stale {
		row.SummaryNote = strings.TrimPrefix(row.SummaryNote+"; intervals left out: summary.json resampled rows, not examples (run svbench report on it)", "; ")
	}
	if len(keys.Key) > 0 {
		row.MainMetric = keys.Key[0].Name
	}
	for _, k := range keys.Key {
		if k.Undefined {
			row.Undefined = append(row.Undefined, k.Name)
			continue
		}
		row.Metrics[k.Name] = k.Value
		if k.Lo != nil && k.Hi != nil && !stale {
			if row.CI == nil {
				row.CI = map[string][2]float64{}
			}
			row.CI[k.Name] = [2]float64{*k.Lo, *k.Hi}
		}
	}
	return nil
}

// Condition names what, besides the model and data, changes a run's
// numbers: rubric, environment parameters and where the rollouts came from.
// Runs that differ in it are different entries, never one "latest" run.
func (row *ScoreRow) Condition() string {
	parts := []string{orDash(row.Rubric)}
	for _, k := range slices.Sorted(maps.Keys(row.Params)) {
		parts = append(parts, k+"="+row.Params[k])
	}
	if l := LabelsText(row.Labels); l != "" {
		parts = append(parts, l)
	}
	if row.Source != "" {
		parts = append(parts, row.Source)
	}
	return strings.Join(parts, " ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// freshSummary returns summary.json when it exists, is not older than
// results.jsonl and carries env's current key metrics (SummaryCurrent),
// nil otherwise.
func freshSummary(dir, env string) (json.RawMessage, error) {
	sp := filepath.Join(dir, artifact.SummaryFile)
	st, err := os.Stat(sp)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if rt, err := os.Stat(filepath.Join(dir, artifact.ResultsFile)); err == nil && rt.ModTime().After(st.ModTime()) {
		return nil, nil
	}
	b, err := os.ReadFile(sp)
	if err != nil {
		return nil, err
	}
	var probe map[string]json.RawMessage
	if json.Unmarshal(b, &probe) != nil || probe["key_metrics"] == nil || !SummaryCurrent(env, probe) {
		return nil, nil // foreign or older summary: recompute
	}
	return b, nil
}

// bestRuns keeps one run per (env, model, dataset revision, condition):
// the most complete (most scored rows), then the newest.
func bestRuns(rows []ScoreRow) []ScoreRow {
	type key struct{ env, model, ds, cond string }
	best := map[key]int{}
	for i, r := range rows {
		ds := r.DatasetRev
		if ds == "" {
			ds = r.Dataset
		}
		k := key{r.Env, r.Model, ds, r.Condition()}
		j, ok := best[k]
		if !ok || r.N > rows[j].N || (r.N == rows[j].N && (r.Date.After(rows[j].Date) || (r.Date.Equal(rows[j].Date) && r.Dir > rows[j].Dir))) {
			best[k] = i
		}
	}
	out := make([]ScoreRow, 0, len(best))
	for _, i := range best {
		out = append(out, rows[i])
	}
	return out
}

// sortScoreRows groups by env and orders each env by its main metric (the
// first key metric), best first; ties by model, then newest.
func sortScoreRows(rows []ScoreRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if a.Env != b.Env {
			return a.Env < b.Env
		}
		if len(a.Order) > 0 && len(b.Order) > 0 {
			m := a.Order[0]
			va, okA := a.Metrics[m.Name]
			vb, okB := b.Metrics[m.Name]
			if okA != okB {
				return okA // an undefined main metric ranks last
			}
			if va != vb {
				if m.HigherIsBetter {
					return va > vb
				}
				return va < vb
			}
		}
		if a.Model != b.Model {
			return a.Model < b.Model
		}
		return a.Date.After(b.Date)
	})
}

// Markdown renders scoreboard.md: one table per environment.
func (sb *Scoreboard) Markdown() string {
	var b strings.Builder
	b.WriteString("# svbench scoreboard\n\n")
	if len(sb.Runs) == 0 {
		b.WriteString("_No runs found._\n")
	}
	for i := 0; i < len(sb.Runs); {
		env := sb.Runs[i].Env
		j := i
		for j < len(sb.Runs) && sb.Runs[j].Env == env {
			j++
		}
		group := sb.Runs[i:j]
		var cols []KeyMetric
		for _, r := range group {
			if len(r.Order) > len(cols) {
				cols = r.Order
			}
		}
		header := []string{"#", "model", "condition", "dataset", "n", "status", "date"}
		priced := slices.ContainsFunc(group, func(r ScoreRow) bool { return r.Cost != nil || len(r.CostUnpriced) > 0 })
		if priced {
			header = append(header, "cost")
		}
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
		var rows [][]string
		for rank, r := range group {
			ds := r.Dataset
			if r.DatasetRev != "" {
				ds += " (" + r.DatasetRev + ")"
			}
			date := "—"
			if !r.Date.IsZero() {
				date = r.Date.UTC().Format("2006-01-02 15:04")
			}
			cells := []string{fmt.Sprint(rank + 1), r.Model, r.Condition(), ds, fmt.Sprint(r.N), r.Status, date}
			if priced {
				if r.Cost != nil || len(r.CostUnpriced) > 0 {
					c := artifact.Cost{Currency: r.Currency, Unpriced: r.CostUnpriced}
					if r.Cost != nil {
						c.Total = *r.Cost
					}
					cells = append(cells, CostText(&c))
				} else {
					cells = append(cells, "—")
				}
			}
			for _, c := range cols {
				v, ok := r.Metrics[c.Name]
				switch {
				case slices.Contains(r.Undefined, c.Name):
					cells = append(cells, "n/a")
				case !ok:
					cells = append(cells, "—")
				case r.CI != nil && r.CI[c.Name] != [2]float64{}:
					ci := r.CI[c.Name]
					cells = append(cells, fmt.Sprintf("%s [%s, %s]", F(v), F(ci[0]), F(ci[1])))
				default:
					cells = append(cells, F(v))
				}
			}
			rows = append(rows, cells)
		}
		fmt.Fprintf(&b, "## %s\n\n%s\n", env, Table(header, rows))
		i = j
	}
	b.WriteString("Metrics marked ↓ are better when lower; [lo, hi] is a 95% interval (percentile cluster bootstrap over examples: rollouts of one example count once); n/a marks a metric the run cannot define (e.g. no positives). Rows are sorted by the first (bold) metric. Only completed runs are ranked; per (environment, model, dataset, condition) the most complete run is shown unless --all.\n")
	if sb.Models != nil && len(sb.Models.Columns) > 1 {
		b.WriteString("\n" + sb.Models.Markdown("Models across environments"))
	}
	if len(sb.Unranked) > 0 {
		b.WriteString("\n## Not ranked (incomplete runs)\n\n")
		var rows [][]string
		for _, r := range sb.Unranked {
			date := "—"
			if !r.Date.IsZero() {
				date = r.Date.UTC().Format("2006-01-02 15:04")
			}
			rows = append(rows, []string{r.Env, r.Model, r.Condition(), fmt.Sprint(r.N), r.Status, date, EscapeCell(r.Dir)})
		}
		b.WriteString(Table([]string{"env", "model", "condition", "n", "status", "date", "dir"}, rows))
	}
	if len(sb.Skipped) > 0 {
		b.WriteString("\n## Skipped\n\n")
		for _, s := range sb.Skipped {
			fmt.Fprintf(&b, "- %s\n", EscapeCell(s))
		}
	}
	return b.String()
}

// WriteScoreboard writes scoreboard.md and scoreboard.json into dir.
func WriteScoreboard(dir string, sb *Scoreboard) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, "scoreboard.json"), sb); err != nil {
		return fmt.Errorf("write scoreboard.json: %w", err)
	}
	if err := artifact.WriteFileAtomic(filepath.Join(dir, "scoreboard.md"), []byte(sb.Markdown())); err != nil {
		return fmt.Errorf("write scoreboard.md: %w", err)
	}
	return nil
}
