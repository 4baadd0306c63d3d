// Package leaderboard ranks models per environment and condition over many
// runs and grades how much each entry's numbers can be trusted.
//
// An entry is one (model, environment, condition); the condition is the
// rubric, the reward source (executable unless a run says otherwise), every
// other environment parameter (E2's policy-pack mode among them), the
// labels the environment gives its configuration (report.Spec.Labels: E5's
// "simulated target") and, for a
// trainer's rollouts, their source. When several runs share an entry the
// most complete one (most scored rows), then the newest, stands for it.
//
// Evidence grade, from the entry's best run:
//
//	A  completed, ≥ 200 examples, ≥ 3 rollouts per example, budgets matched
//	B  completed, ≥ 100 examples, budgets matched
//	C  completed, ≥ 30 examples (or larger but budgets not matched)
//	D  not completed, or fewer than 30 examples
//
// "Budgets matched": the entry's compare.Budget (dataset revision, rollouts
// per example, max tokens, temperature, top-p, extra request body, max
// turns, tool budget, system prompt) is that of the
// other models' entries in the same environment and condition (the budget
// most entries share; ties go to the budget with the most scored rows).
// A mismatched entry is capped at C and the differing fields are named. An
// entry alone in its condition is compared with nobody: its budget counts
// as matched and the report says it stands alone.
package leaderboard

import (
	"cmp"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/svbench/svbench/analysis/compare"
	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/ingest"
	"github.com/svbench/svbench/report"
)

// Grade thresholds (see the package comment).
const (
	MinExamplesA = 200
	MinRolloutsA = 3
	MinExamplesB = 100
	MinExamplesC = 30
)

// Entry is one leaderboard row.
type Entry struct {
	// Rank orders the graded entries of a condition, grade first (an A
	// ranks above every B whatever their values), then the main metric
	// within the grade. 0 = not ranked: grade D entries (unfinished or
	// under MinExamplesC examples) are listed, never ranked, since their
	// values are too uncertain to order.
	Rank int `json:"rank"`
	// RunID names the run that stands for the entry (its directory's
	// name when the metadata has none); Dir is where it is.
	RunID      string `json:"run_id"`
	Env        string `json:"env"`
	Model      string `json:"model"`
	Condition  string `json:"condition"`
	RewardSrc  string `json:"reward_source"`
	Dataset    string `json:"dataset"`
	DatasetRev string `json:"dataset_revision"`
	// Split is the split the run read (artifact.Metadata.SplitRead); a
	// run of any split but test is graded D, not an evaluation.
	Split          string                `json:"split,omitempty"`
	Examples       int                   `json:"examples"`
	Rollouts       int                   `json:"rollouts_per_example"`
	Scored         int                   `json:"scored_rows"`
	Status         string                `json:"status"`
	Runs           int                   `json:"runs"`
	Dir            string                `json:"dir"`
	MainMetric     string                `json:"main_metric,omitempty"`
	HigherIsBetter bool                  `json:"higher_is_better"`
	Metrics        map[string]float64    `json:"metrics"`
	CI             map[string][2]float64 `json:"ci,omitempty"`
	Undefined      []string              `json:"undefined,omitempty"`
	// BudgetMatched says whether the entry's budget is its condition's;
	// Mismatches names what differs when it is not. Alone: no other model
	// shares the condition.
	BudgetMatched bool     `json:"budget_matched"`
	Alone         bool     `json:"alone,omitempty"`
	Mismatches    []string `json:"budget_mismatches,omitempty"`
	Grade         string   `json:"grade"`
	// Why explains the grade in words.
	Why string `json:"grade_reason"`

	meta  *artifact.Metadata
	order []report.KeyMetric
	date  string
}

// Leaderboard is leaderboard.json.
type Leaderboard struct {
	Sources []string `json:"sources"`
	Entries []Entry  `json:"entries"`
	Skipped []string `json:"skipped,omitempty"`
	Rule    string   `json:"grade_rule"`
	// Models is one row per model, one column per environment (and
	// condition): each entry's main metric with its interval and grade, and
	// the reward range the rubric declares (report.BuildModelTable).
	Models *report.ModelTable `json:"models_by_env,omitempty"`
}

// GradeRule is the grading rule in one paragraph, printed with every
// leaderboard.
const GradeRule = "A: completed, ≥ 200 examples, ≥ 3 rollouts per example, budget matched; B: completed, ≥ 100 examples, budget matched; C: completed, ≥ 30 examples (a budget mismatch caps the grade here); D: not completed, < 30 examples, or a run of the train or dev split (not an evaluation). Budget = dataset revision, rollouts per example, max tokens, temperature, top-p, extra request body, max turns, tool budget, system prompt, compared with the other models in the same environment and condition."

// Options select and load runs.
type Options struct {
	Env string // canonical id; "" = every environment
	// LoadTrainerRun loads a trainer's run directory (see
	// report.ScoreboardOptions); nil skips such directories.
	LoadTrainerRun func(dir string) (*report.Report, *artifact.Metadata, error)
}

// Build collects the runs under every source (a root to walk or a run
// directory) through report.CollectScoreboard and builds the leaderboard.
func Build(sources []string, opts Options) (*Leaderboard, error) {
	lb := &Leaderboard{Sources: sources, Rule: GradeRule}
	var rows []report.ScoreRow
	for _, src := range sources {
		st, err := os.Stat(src)
		if err != nil {
			return nil, fmt.Errorf("leaderboard: %w", err)
		}
		if !st.IsDir() {
			return nil, fmt.Errorf("leaderboard: %s is not a directory (give run directories or a root holding them)", src)
		}
		sb, err := report.CollectScoreboard(src, report.ScoreboardOptions{Env: opts.Env, All: true, LoadTrainerRun: opts.LoadTrainerRun})
		if err != nil {
			return nil, err
		}
		rows = append(rows, sb.Runs...)
		rows = append(rows, sb.Unranked...)
		lb.Skipped = append(lb.Skipped, sb.Skipped...)
	}
	seen := map[string]bool{}
	var entries []Entry
	for _, r := range rows {
		if seen[r.Dir] { // a run named twice (root and dir)
			continue
		}
		seen[r.Dir] = true
		e, err := entryOf(r)
		if err != nil {
			lb.Skipped = append(lb.Skipped, fmt.Sprintf("%s: %v", r.Dir, err))
			continue
		}
		entries = append(entries, e)
	}
	lb.Entries = rank(best(entries))
	lb.Models = modelTable(lb.Entries)
	return lb, nil
}

func entryOf(r report.ScoreRow) (Entry, error) {
	meta, err := metadata(r.Dir)
	if err != nil {
		return Entry{}, err
	}
	if meta.NoRows() {
		return Entry{}, fmt.Errorf("left out: no scored row, all %d model calls failed (%s; a wrong model name?)", meta.Errors, meta.Status)
	}
	e := Entry{Env: r.Env, Model: r.Model, Dataset: r.Dataset, DatasetRev: r.DatasetRev, Scored: r.N, Status: r.Status, Runs: 1,
		Dir: r.Dir, RunID: cmp.Or(meta.RunID, filepath.Base(r.Dir)), MainMetric: r.MainMetric, Metrics: r.Metrics, CI: r.CI, Undefined: r.Undefined, meta: meta, order: r.Order,
		RewardSrc: meta.RewardSource(), Rollouts: max(meta.Rollouts, 1), Examples: meta.NumExamples, Split: meta.SplitRead()}
	if e.Examples == 0 {
		e.Examples = r.N / e.Rollouts
	}
	if len(r.Order) > 0 {
		e.HigherIsBetter = r.Order[0].HigherIsBetter
	}
	if !r.Date.IsZero() {
		e.date = r.Date.UTC().Format("2006-01-02T15:04:05")
	}
	parts := []string{cmp.Or(r.Rubric, "—"), "reward_source=" + e.RewardSrc}
	for _, k := range slices.Sorted(maps.Keys(r.Params)) {
		if k != "reward_source" {
			parts = append(parts, k+"="+r.Params[k])
		}
	}
	if l := report.LabelsText(r.Labels); l != "" {
		parts = append(parts, l)
	}
	if r.Source != "" {
		parts = append(parts, r.Source)
	}
	if e.Split == env.SplitTrain || e.Split == env.SplitDev {
		parts = append(parts, "split="+e.Split)
	}
	e.Condition = strings.Join(parts, " ")
	return e, nil
}

// metadata reads an svbench run's metadata.json, or maps a trainer run's
// manifest onto metadata.
func metadata(dir string) (*artifact.Metadata, error) {
	if _, err := os.Stat(filepath.Join(dir, artifact.MetadataFile)); err == nil {
		return artifact.ReadMetadata(dir)
	}
	man, err := ingest.ReadManifest(dir)
	if err != nil {
		return nil, err
	}
	if man == nil {
		return nil, fmt.Errorf("neither %s nor %s", artifact.MetadataFile, artifact.ManifestFile)
	}
	return ingest.ManifestMetadata(man, man.EnvironmentID, ""), nil
}

// best keeps one run per (env, model, condition): the most scored rows,
// then completed over not, then the newest.
func best(entries []Entry) []Entry {
	type key struct{ env, model, cond string }
	idx := map[key]int{}
	count := map[key]int{}
	var out []Entry
	for _, e := range entries {
		k := key{e.Env, e.Model, e.Condition}
		count[k]++
		j, ok := idx[k]
		if !ok {
			idx[k] = len(out)
			out = append(out, e)
			continue
		}
		b := out[j]
		better := cmp.Or(cmp.Compare(e.Scored, b.Scored), cmp.Compare(b2i(e.Status == artifact.StatusCompleted), b2i(b.Status == artifact.StatusCompleted)),
			cmp.Compare(e.date, b.date), cmp.Compare(e.Dir, b.Dir)) > 0
		if better {
			out[j] = e
		}
	}
	for i := range out {
		out[i].Runs = count[key{out[i].Env, out[i].Model, out[i].Condition}]
	}
	return out
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// budgetKey is what must match between models of one condition:
// compare.Budget, the list compare refuses mismatches of (rubric and
// parameters are fixed by the condition already).
func budgetKey(m *artifact.Metadata) string {
	var parts []string
	for _, f := range compare.Budget(m) {
		parts = append(parts, f.Value)
	}
	return strings.Join(parts, "|")
}

// rank grades entries and orders them by environment, condition, grade
// and main metric (best first; an undefined main metric last), then
// numbers the graded ones (see Entry.Rank).
func rank(entries []Entry) []Entry {
	type group struct{ env, cond string }
	groups := map[group][]int{}
	for i, e := range entries {
		g := group{e.Env, e.Condition}
		groups[g] = append(groups[g], i)
	}
	for _, members := range groups {
		// The condition's budget: the one most entries share, ties to the
		// one with the most scored rows, then the smallest key.
		votes, rowsPer := map[string]int{}, map[string]int{}
		for _, i := range members {
			k := budgetKey(entries[i].meta)
			votes[k]++
			rowsPer[k] += entries[i].Scored
		}
		keys := slices.Sorted(maps.Keys(votes))
		ref := slices.MaxFunc(keys, func(a, b string) int {
			return cmp.Or(cmp.Compare(votes[a], votes[b]), cmp.Compare(rowsPer[a], rowsPer[b]), cmp.Compare(b, a))
		})
		var refMeta *artifact.Metadata
		for _, i := range members {
			if budgetKey(entries[i].meta) == ref {
				refMeta = entries[i].meta
				break
			}
		}
		for _, i := range members {
			e := &entries[i]
			e.Alone = len(members) == 1
			// A budget setting one run did not record (a run from before
			// episode limits were recorded) is unknown, not a mismatch, as in
			// compare: matched means no setting both record differs.
			e.BudgetMatched = true
			if budgetKey(e.meta) != ref {
				for _, m := range compare.Mismatches(refMeta, e.meta) {
					if m.Field != "rubric" && !strings.HasPrefix(m.Field, "param ") && m.Field != "environment" {
						e.Mismatches = append(e.Mismatches, fmt.Sprintf("%s %s (others: %s)", m.Field, m.B, m.A))
					}
				}
				e.BudgetMatched = len(e.Mismatches) == 0
			}
			e.Grade, e.Why = grade(e)
		}
	}
	slices.SortStableFunc(entries, func(a, b Entry) int {
		if c := cmp.Or(cmp.Compare(a.Env, b.Env), cmp.Compare(a.Condition, b.Condition), cmp.Compare(a.Grade, b.Grade)); c != 0 {
			return c
		}
		va, okA := a.Metrics[a.MainMetric]
		vb, okB := b.Metrics[b.MainMetric]
		if okA != okB {
			return -cmp.Compare(b2i(okA), b2i(okB))
		}
		if va != vb {
			if a.HigherIsBetter {
				return cmp.Compare(vb, va)
			}
			return cmp.Compare(va, vb)
		}
		return cmp.Compare(a.Model, b.Model)
	})
	next := 1
	for i := range entries {
		if i == 0 || entries[i].Env != entries[i-1].Env || entries[i].Condition != entries[i-1].Condition {
			next = 1
		}
		if entries[i].Grade == "D" {
			entries[i].Rank = 0
			continue
		}
		entries[i].Rank = next
		next++
	}
	return entries
}

// grade applies the rule in the package comment.
func grade(e *Entry) (string, string) {
	if e.Status != artifact.StatusCompleted {
		return "D", fmt.Sprintf("run %s, not completed", cmp.Or(e.Status, "of unknown status"))
	}
	if e.Split == env.SplitTrain || e.Split == env.SplitDev {
		return "D", fmt.Sprintf("not an evaluation: the run read the %s split (evaluate on test)", e.Split)
	}
	if e.Examples < MinExamplesC {
		return "D", fmt.Sprintf("%d examples, fewer than %d", e.Examples, MinExamplesC)
	}
	size := fmt.Sprintf("%d examples × %d rollouts", e.Examples, e.Rollouts)
	if !e.BudgetMatched {
		return "C", size + "; budget not matched: " + strings.Join(e.Mismatches, "; ")
	}
	alone := ""
	if e.Alone {
		alone = "; no other model in this condition"
	}
	switch {
	case e.Examples >= MinExamplesA && e.Rollouts >= MinRolloutsA:
		return "A", size + ", budget matched" + alone
	case e.Examples >= MinExamplesB:
		return "B", size + ", budget matched" + alone
	}
	return "C", fmt.Sprintf("%s, fewer than %d examples%s", size, MinExamplesB, alone)
}
