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
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
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

// Builder computes one environment's report from its rows. meta may be nil
// (a bare results file). It must not keep rows.
type Builder func(rows []artifact.Result, meta *artifact.Metadata, opts Options) (*Report, error)

// Spec is an environment that has a report of its own: its registration
// (env.Spec: id, aliases, constructor, configuration, breakdown) and its
// report, joined to svbench by one call in the environment package's init:
//
//	func init() {
//		report.Register(report.Spec{
//			Env:   env.Spec{ID: ID, Aliases: []string{"e1"}, New: New, Config: DefaultConfig()},
//			Build: BuildReport,
//		})
//	}
//
// An environment without a report of its own calls env.Register and gets
// Generic over its Breakdown fields. Names resolve through the env
// registry: any case, surrounding space ignored, "_" read as "-", and the
// reference's "sv-env-" prefix optional.
type Spec struct {
	Env   env.Spec
	Build Builder
	// KeyMetricsVersion is bumped when a key metric changes name or
	// meaning (E1's "accuracy" became accuracy over every row in version
	// 1, issue #44). Build writes it as summary.json's
	// key_metrics_version when it is above 0; a summary.json with a lower
	// one is not trusted (SummaryCurrent): the scoreboard and the
	// dashboard compute the key metrics again instead.
	KeyMetricsVersion int
	// Labels, when set, names what a run's resolved configuration
	// (artifact.Metadata.Conditions) makes its numbers mean, such as E5's
	// "simulated target" (ConditionLabels).
	Labels func(conditions map[string]string) []string
}

// reportSpec is what the report registry keeps of a Spec.
type reportSpec struct {
	build      Builder
	keyVersion int
	labels     func(conditions map[string]string) []string
}

var (
	mu    sync.RWMutex
	specs = map[string]reportSpec{} // canonical id → its report
	names = map[string]string{}     // normalised alias of an id outside the env registry → id
)

// Register adds an environment and its report. A missing id or builder,
// or a name already used, is a programming error and panics at start-up.
func Register(s Spec) {
	if s.Env.ID == "" || s.Build == nil {
		panic(fmt.Sprintf("report: Register(%q) needs Env.ID and Build", s.Env.ID))
	}
	env.Register(s.Env)
	register(s.Env.ID, nil, s)
}

// register adds a report under id. aliases are for ids outside the env
// registry (the package's tests build reports of such ids); a registered
// environment's names are resolved by the env registry.
func register(id string, aliases []string, s Spec) {
	mu.Lock()
	defer mu.Unlock()
	if _, dup := specs[id]; dup {
		panic(fmt.Sprintf("report: %s registered twice", id))
	}
	all := append([]string{id}, aliases...)
	for _, n := range all {
		if prev, dup := names[normalise(n)]; dup && prev != id {
			panic(fmt.Sprintf("report: name %q of %s already used by %s", n, id, prev))
		}
	}
	for _, n := range all {
		names[normalise(n)] = id
	}
	specs[id] = reportSpec{build: s.Build, keyVersion: s.KeyMetricsVersion, labels: s.Labels}
}

// KeyMetricsVersionKey is summary.json's field for Spec.KeyMetricsVersion.
const KeyMetricsVersionKey = "key_metrics_version"

// KeyMetricsVersion is the Spec.KeyMetricsVersion of an environment (any
// name Resolve accepts; 0 for one that never changed a key metric).
func KeyMetricsVersion(name string) int {
	id, err := Resolve(name)
	if err != nil {
		return 0
	}
	mu.RLock()
	defer mu.RUnlock()
	return specs[id].keyVersion
}

// SummaryCurrent reports whether a summary.json of environment id (any
// name Resolve accepts; its
// key_metrics_version field, absent meaning 0) carries the key metrics
// this build writes under the same names and meanings.
func SummaryCurrent(id string, summary map[string]json.RawMessage) bool {
	want := KeyMetricsVersion(id)
	if want == 0 {
		return true
	}
	var got int
	if raw, ok := summary[KeyMetricsVersionKey]; ok && json.Unmarshal(raw, &got) != nil {
		return false
	}
	return got >= want
}

// EnvIDs lists the env ids that have a builder, sorted.
func EnvIDs() []string {
	mu.RLock()
	defer mu.RUnlock()
	return slices.Sorted(maps.Keys(specs))
}

// Resolve maps any registered name of an environment (e1, network-logs,
// sv-env-network-logs, any case) to its canonical id.
//
// Every environment in the env registry has a report: its own builder when
// it registered one, Generic otherwise; names resolve through the env
// registry, where aliases are declared once.
func Resolve(name string) (string, error) {
	if id, err := env.Default.Resolve(name); err == nil {
		return id, nil
	}
	mu.RLock()
	id, ok := names[normalise(name)]
	mu.RUnlock()
	if !ok {
		return "", fmt.Errorf("no report for environment %q (known: %s)", name, strings.Join(knownIDs(), ", "))
	}
	return id, nil
}

// knownIDs lists every environment with a report: the registered
// environments and builders registered without one (tests).
func knownIDs() []string {
	ids := append(env.Default.IDs(), EnvIDs()...)
	slices.Sort(ids)
	return slices.Compact(ids)
}

// builderFor returns id's builder: its own, or Generic over the Meta
// fields its registration names for a breakdown.
func builderFor(id string) Builder {
	mu.RLock()
	b := specs[id].build
	mu.RUnlock()
	if b != nil {
		return b
	}
	spec, err := env.Default.Lookup(id)
	if err != nil {
		return Generic(nil)
	}
	return Generic(spec.Breakdown)
}

// normalise is the name folding env.Registry applies, so both registries
// accept the same spellings.
func normalise(name string) string {
	n := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "sv-env-")
	return strings.ReplaceAll(n, "_", "-")
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
