// Package report turns a run's artifacts (results.jsonl, metadata.json)
// into summary.json, report.md and SVG charts, and collects many runs into
// a scoreboard. Each environment package registers its own Builder (see
// Register); this package holds only what every report shares: loading,
// strict mode, writing, Markdown and SVG helpers, the binary-detection core
// E1 and E4 build on, the reference's summary envelope and the scoreboard.
// It never imports an environment: a binary or test that needs a builder
// imports the environment package (internal/envs links them all).
//
// Conventions every Builder follows so the scoreboard and other tools can
// read any env's summary.json without knowing the env:
//   - Report.Key lists the scoreboard metrics, the main one first; Build
//     copies it into Summary["key_metrics"].
//   - Summary["env"], Summary["n_rows"] and Summary["run"] are set by Build.
//   - Report.Problems lists error rows and rows whose output could not be
//     parsed; Build refuses to report them when Options.Strict is set.
package report

import (
	"cmp"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

// Stat is one line of the terminal headline.
type Stat struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// KeyMetric is a scoreboard column. A metric with no defined value on a run
// (accuracy when every row abstained) has Undefined set and Value 0; readers
// should show it as n/a, never as a score of 0.
type KeyMetric struct {
	Name           string  `json:"name"`
	Value          float64 `json:"value"`
	HigherIsBetter bool    `json:"higher_is_better"`
	Undefined      bool    `json:"undefined,omitempty"`
	// Lo and Hi bound the 95% bootstrap interval when the report has one.
	Lo *float64 `json:"ci_lo,omitempty"`
	Hi *float64 `json:"ci_hi,omitempty"`
}

// AttachCIs copies bootstrap intervals onto the key metrics of the same
// name, so the scoreboard can show them.
func AttachCIs(keys []KeyMetric, ci map[string]metrics.CI) {
	for i := range keys {
		if c, ok := ci[keys[i].Name]; ok && !keys[i].Undefined {
			lo, hi := c.Lo, c.Hi
			keys[i].Lo, keys[i].Hi = &lo, &hi
		}
	}
}

// Key is the KeyMetric of a value that may be undefined (nil).
func Key(name string, v *float64, higherIsBetter bool) KeyMetric {
	if v == nil {
		return KeyMetric{Name: name, HigherIsBetter: higherIsBetter, Undefined: true}
	}
	return KeyMetric{Name: name, Value: *v, HigherIsBetter: higherIsBetter}
}

// Chart is an SVG written next to report.md as Name+".svg"; the Markdown
// refers to it by that file name (see ChartRef).
type Chart struct {
	Name  string
	Title string
	SVG   []byte
}

// Problem kinds.
const (
	ProblemError      = "error"       // the model call failed
	ProblemScoreError = "score_error" // scoring failed
	ProblemUnparsed   = "unparsed"    // no valid answer could be read
	// ProblemUnverifiable: a row read from elsewhere whose verifier svbench
	// lacks; listed, left out of metrics, not refused by --strict.
	ProblemUnverifiable = "unverifiable"
)

// Problem is a row a strict report refuses.
type Problem struct {
	Row     int    `json:"row"` // position in the rows given to the builder
	Line    int    `json:"line,omitempty"`
	Index   int    `json:"index"`
	Rollout int    `json:"rollout"`
	Kind    string `json:"kind"`
	Detail  string `json:"detail,omitempty"`
}

// ExcludedRow returns the Problem of a row no metric may use: its scoring
// failed (ProblemScoreError), or its model call failed and it was never
// scored (ProblemError; rows written before the runner scored failed
// calls). i is the row's position in the builder's rows.
//
// A row whose model call failed but which the runner scored as its
// transcript stands (artifact.Result.FailedButScored) is not excluded: it is an attempted row
// without an answer and counts in every metric by the environment's rule,
// as an unanswered row does. Build lists it as a ProblemError, so --strict
// still refuses the run.
func ExcludedRow(i int, r *artifact.Result) (Problem, bool) {
	p := Problem{Row: i, Index: r.Index, Rollout: r.Rollout}
	switch {
	case r.Error != "" && !r.FailedButScored():
		p.Kind, p.Detail = ProblemError, Clip(r.Error, 160)
	case r.ScoreError != "":
		p.Kind, p.Detail = ProblemScoreError, Clip(r.ScoreError, 160)
	default:
		return Problem{}, false
	}
	return p, true
}

// Report is everything `svbench report` writes for one run.
type Report struct {
	EnvID    string
	Summary  map[string]any // summary.json
	Markdown string         // report.md
	Headline []Stat         // one-screen terminal summary
	Key      []KeyMetric
	Charts   []Chart
	Problems []Problem
}

// Options tune report building. The zero value gives the default report.
type Options struct {
	// Strict makes Build fail with a *StrictError when any row is an
	// error or could not be parsed.
	Strict bool
	// BootstrapReps is the number of bootstrap resamples for confidence
	// intervals: 0 means metrics.DefaultReps, negative disables them.
	BootstrapReps int
	// Seed seeds the bootstrap; 0 uses the run's seed from metadata (so a
	// report is reproducible from its artifacts alone).
	Seed uint64
}

// BootstrapMethod is summary.json's bootstrap.method for per-run
// intervals: every builder resamples examples, not rows (see
// ExampleClusters).
const BootstrapMethod = metrics.ClusterMethod

// ExampleClusters groups the rows at positions pos (indices into rows)
// by example, for metrics.ClusterBootstrapMulti: cluster members are
// indices into pos, so statistics index the caller's per-observation
// slices. Rollouts of one example travel together in every resample.
func ExampleClusters(rows []artifact.Result, pos []int) [][]int {
	return metrics.Clusters(len(pos), func(k int) int { return rows[pos[k]].Index })
}

// Reps resolves BootstrapReps.
func (o Options) Reps() int {
	switch {
	case o.BootstrapReps == 0:
		return metrics.DefaultReps
	case o.BootstrapReps < 0:
		return 0
	}
	return o.BootstrapReps
}

// BootstrapSeed resolves Seed against the run metadata.
func (o Options) BootstrapSeed(meta *artifact.Metadata) uint64 {
	if o.Seed != 0 {
		return o.Seed
	}
	if meta != nil && meta.Seed != 0 {
		return meta.Seed
	}
	return 1
}

// StrictError lists the rows a strict report refused.
type StrictError struct {
	Problems []Problem
}

func (e *StrictError) Error() string {
	const show = 20
	var b strings.Builder
	fmt.Fprintf(&b, "strict: %d row(s) are API errors or unparsed; fix or re-run them (svbench eval resumes error rows), or drop --strict:", len(e.Problems))
	for i, p := range e.Problems {
		if i == show {
			fmt.Fprintf(&b, "\n  … and %d more", len(e.Problems)-show)
			break
		}
		where := fmt.Sprintf("row %d", p.Row+1)
		if p.Line > 0 {
			where = fmt.Sprintf("line %d", p.Line)
		}
		fmt.Fprintf(&b, "\n  %s (index %d, rollout %d): %s", where, p.Index, p.Rollout, p.Kind)
		if p.Detail != "" {
			fmt.Fprintf(&b, ": %s", p.Detail)
		}
	}
	return b.String()
}

// Build runs the builder of envID (canonical id or any name Resolve
// accepts) and fills the shared summary fields.
func Build(envID string, rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error) {
	id, err := Resolve(envID)
	if err != nil {
		return nil, err
	}
	b := builderFor(id)
	// The builder sees the rows in canonical (example, rollout) order:
	// statistics, bootstrap resamples above all, follow row order, and rows
	// are appended as rollouts finish, so without it the same run would
	// give a different report at another concurrency. Rows svbench could
	// not re-verify (a trainer's rows whose verifier it lacks) carry a
	// recorded reward but no parsed output: they are counted and listed,
	// never passed to a builder as if they were scored. pos maps the
	// builder's row positions back to the caller's.
	pos := make([]int, 0, len(rows))
	var unverifiable []Problem
	for _, i := range canonicalOrder(rows) {
		if rows[i].Unverifiable != "" {
			unverifiable = append(unverifiable, Problem{Row: i, Index: rows[i].Index, Rollout: rows[i].Rollout, Kind: ProblemUnverifiable, Detail: rows[i].Unverifiable})
			continue
		}
		pos = append(pos, i)
	}
	builderRows := make([]artifact.Result, len(pos))
	for k, i := range pos {
		builderRows[k] = rows[i]
	}
	r, err := b(builderRows, meta, opts)
	if err != nil {
		return nil, fmt.Errorf("%s report: %w", id, err)
	}
	for i := range r.Problems {
		if p := r.Problems[i].Row; p >= 0 && p < len(pos) {
			r.Problems[i].Row = pos[p]
		}
	}
	if opts.Reps() == 0 {
		// Without resamples a builder's CI is the point three times: not
		// an interval, so no key metric may carry one (the dashboard and
		// the scoreboard would print it as "[x, x]").
		for i := range r.Key {
			r.Key[i].Lo, r.Key[i].Hi = nil, nil
		}
	}
	r.EnvID = id
	if r.Summary == nil {
		r.Summary = map[string]any{}
	}
	r.Summary["env"] = id
	r.Summary["n_rows"] = len(rows)
	r.Summary["key_metrics"] = r.Key
	if v := KeyMetricsVersion(id); v > 0 {
		r.Summary[KeyMetricsVersionKey] = v
	}
	if len(unverifiable) > 0 {
		r.Summary["unverifiable_rows"] = len(unverifiable)
		r.Headline = append(r.Headline, Stat{Name: "not re-verifiable", Value: fmt.Sprintf("%d row(s) left out: %s", len(unverifiable), Clip(unverifiable[0].Detail, 120))})
		r.Markdown += fmt.Sprintf("\n## Rows not re-verified\n\n%d row(s) could not be re-scored here and are left out of every metric above (their recorded rewards are kept in the results). First reason: %s\n", len(unverifiable), EscapeCell(unverifiable[0].Detail))
	}
	if pts, charts, md := learningCurve(builderRows, opts.BootstrapSeed(meta), opts.Reps()); len(pts) > 0 {
		r.Summary["learning_curve"] = pts
		r.Charts = append(r.Charts, charts...)
		r.Markdown += md
	}
	for i := range r.Charts {
		r.Charts[i].SVG = WithSubtitle(r.Charts[i].SVG, chartSubtitle(id, meta, len(builderRows)))
	}
	if n := reasoningOnly(rows); n > 0 {
		r.Summary["reasoning_only_rows"] = n
		r.Headline = append(r.Headline, Stat{Name: "answer only in reasoning", Value: fmt.Sprintf("%d row(s): empty content, text in reasoning_content — scored as no answer (raise --max-tokens, or check the server's reasoning parser)", n)})
		r.Markdown += fmt.Sprintf("\n## Answers only in reasoning\n\n%d row(s) ended with an empty `content` and a non-empty `reasoning_content`. Both rubrics score only `content`, as the reference does, so these rows count as no answer. This usually means the model ran out of tokens while thinking (raise `--max-tokens`) or the server's reasoning parser swallowed the answer.\n", n)
	}
	if cov, stat, md := coverage(rows, builderRows, b, meta, r.Key); cov != nil {
		r.Summary["coverage"] = cov
		r.Headline = append(r.Headline, stat)
		r.Markdown += md
	}
	if md := usageSection(meta); md != "" {
		r.Markdown += md
		r.Summary["usage_by_model"] = meta.UsageByModel
		if c := meta.Cost; c != nil {
			r.Summary["cost"] = c
			r.Headline = append(r.Headline, Stat{Name: "cost", Value: fmt.Sprintf("%s (prices of %s)", CostText(c), c.PricesDate)})
		}
	}
	// Rows whose model call failed but that were scored as no answer count
	// in the metrics (ExcludedRow); they are still problems of the run.
	for _, i := range pos {
		if rows[i].FailedButScored() {
			r.Problems = append(r.Problems, Problem{Row: i, Index: rows[i].Index, Rollout: rows[i].Rollout, Kind: ProblemError,
				Detail: "counted as no answer: " + Clip(rows[i].Error, 160)})
		}
	}
	strictProblems := slices.Clone(r.Problems)
	r.Problems = append(r.Problems, unverifiable...)
	if meta != nil {
		r.Summary["run"] = RunInfo(meta)
	}
	if opts.Strict && len(strictProblems) > 0 {
		return r, &StrictError{Problems: strictProblems}
	}
	return r, nil
}

// RunInfo is the part of the metadata a summary repeats so it stands alone.
func RunInfo(m *artifact.Metadata) map[string]any {
	info := map[string]any{
		"run_id": m.RunID, "environment": m.Environment, "env_version": m.EnvVersion,
		"model": m.Model, "dataset": m.Dataset, "dataset_revision": m.DatasetRev,
		"seed": m.Seed, "git_commit": m.GitCommit, "status": m.Status, "rubric": m.Rubric,
	}
	if m.Split != "" {
		info["split"] = m.Split
	}
	if !m.Started.IsZero() {
		info["started"] = m.Started
	}
	return info
}

// WriteDir writes summary.json, report.md and the charts into dir, each
// atomically, so a crashed report never leaves half a file.
func WriteDir(dir string, r *Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("report dir: %w", err)
	}
	for _, c := range r.Charts {
		if err := artifact.WriteFileAtomic(filepath.Join(dir, c.Name+".svg"), c.SVG); err != nil {
			return fmt.Errorf("write chart %s: %w", c.Name, err)
		}
	}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.SummaryFile), r.Summary); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	if err := artifact.WriteFileAtomic(filepath.Join(dir, artifact.ReportFile), []byte(r.Markdown)); err != nil {
		return fmt.Errorf("write report: %w", err)
	}
	return nil
}

// FromRun loads a run directory or a results file (metadata.json beside it
// is optional) and builds its report. envID "" takes the environment from
// the metadata. Strict failures come back as *StrictError with file lines.
func FromRun(runDirOrResults string, envID string, opts Options) (*Report, error) {
	path := artifact.ResultsPath(runDirOrResults)
	return fromRows(filepath.Dir(path), envID, opts, func() ([]artifact.Result, []int, error) { return LoadForReport(path) })
}

// fromRows is FromRun with the rows of dir's results file from load
// (LoadForReport, or a Collector that holds them already).
func fromRows(dir, envID string, opts Options, load func() ([]artifact.Result, []int, error)) (*Report, error) {
	var meta *artifact.Metadata
	if _, err := os.Stat(filepath.Join(dir, artifact.MetadataFile)); err == nil {
		m, err := artifact.ReadMetadata(dir)
		if err != nil {
			return nil, err
		}
		meta = m
	}
	if envID == "" {
		if meta == nil || meta.Environment == "" {
			return nil, fmt.Errorf("%s: no metadata.json naming the environment; pass the environment (e.g. --env e1)", dir)
		}
		envID = meta.Environment
	}
	rows, lines, err := load()
	if err != nil {
		return nil, err
	}
	r, err := Build(envID, rows, meta, opts)
	var se *StrictError
	if errors.As(err, &se) {
		for i := range se.Problems {
			if p := se.Problems[i].Row; p >= 0 && p < len(lines) {
				se.Problems[i].Line = lines[p]
			}
		}
	}
	if r != nil {
		for i := range r.Problems {
			if p := r.Problems[i].Row; p >= 0 && p < len(lines) {
				r.Problems[i].Line = lines[p]
			}
		}
	}
	return r, err
}

// reasoningOnly counts rows whose final assistant message has no content but
// has reasoning text: a thinking model's answer lost to truncation or to the
// server's reasoning parser, which the rubric scores as no answer.
func reasoningOnly(rows []artifact.Result) int {
	n := 0
	for i := range rows {
		msgs := rows[i].Completion
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Role != "assistant" {
				continue
			}
			if strings.TrimSpace(msgs[j].Content) == "" && strings.TrimSpace(msgs[j].Reasoning) != "" {
				n++
			}
			break
		}
	}
	return n
}

// canonicalOrder returns row positions sorted by (example index,
// rollout); the sort is stable, so rows sharing a key (reference rows
// without rollouts) keep their file order.
func canonicalOrder(rows []artifact.Result) []int {
	order := make([]int, len(rows))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(rows[a].Index, rows[b].Index); c != 0 {
			return c
		}
		return cmp.Compare(rows[a].Rollout, rows[b].Rollout)
	})
	return order
}

// chartSubtitle names what a chart is of: model, environment, rubric, rows.
func chartSubtitle(env string, meta *artifact.Metadata, n int) string {
	model, rubric := "unknown model", ""
	if meta != nil {
		if meta.Model != "" {
			model = meta.Model
		}
		if meta.Rubric != "" {
			rubric = " · " + meta.Rubric + " rubric"
		}
	}
	return fmt.Sprintf("%s · %s%s · %d rows", model, env, rubric, n)
}
