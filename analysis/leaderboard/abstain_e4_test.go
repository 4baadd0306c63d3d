package leaderboard_test

// Issue #44, item 4 for E4: abstentions drop out of the phishing confusion
// matrix, so F1 over decided rows is 1.0 for a model that makes one right
// Phishing call and abstains on everything else. E4 ranks by F1 over every
// scored row (an abstention on a phishing email is a miss), which
// abstaining cannot raise. The runs are the embedded test set's 180 rows,
// scored by the environment's default rubric; the honest model is the
// built-in baseline itself.

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/analysis/leaderboard"
	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/phishing"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/web"
)

// e4Answerer answers example i of the set: its completion text.
type e4Answerer func(t *testing.T, i int, ex env.Example) string

// e4Abstainer says Phishing, right, on the first phishing email and
// abstains on every other row.
func e4Abstainer(examples []env.Example) e4Answerer {
	first := slices.IndexFunc(examples, func(ex env.Example) bool { return string(ex.Answer) == `"`+phishing.LabelPhishing+`"` })
	return func(t *testing.T, i int, _ env.Example) string {
		if i == first {
			return `{"label": "Phishing", "confidence": 0.9, "evidence": []}`
		}
		return `{"label": "Abstain", "confidence": 0.5, "evidence": []}`
	}
}

// e4Baseline is builtin:indicators: it answers most rows right, misses
// some and abstains near ½.
func e4Baseline(e *phishing.Environment) e4Answerer {
	pol, ok := e.Policy(phishing.PolicyIndicators)
	if !ok {
		panic("no builtin:indicators")
	}
	return func(t *testing.T, _ int, ex env.Example) string {
		msg, err := pol.Act(context.Background(), ex.Prompt, nil)
		if err != nil {
			t.Fatal(err)
		}
		return msg.Content
	}
}

// writeE4Run writes a completed E4 run of model on examples under root,
// scored by the default rubric, with the summary.json state asks for
// (oldSummary: one of key_metrics_version 1, whose "f1" is F1 on decided
// rows). It returns the run directory and the report svbench builds for it.
func writeE4Run(t *testing.T, root string, e *phishing.Environment, examples []env.Example, model string, answer e4Answerer, state summaryState) (string, *report.Report) {
	t.Helper()
	dir := filepath.Join(root, "evals", "phishing-detection--"+strings.ReplaceAll(model, ":", "-"), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sampling, _ := json.Marshal(map[string]int{"max_tokens": 512})
	meta := artifact.Metadata{RunID: "run-" + strings.ReplaceAll(model, ":", "-"), Environment: phishing.ID, EnvVersion: e.Info().Version, Rubric: phishing.RubricDefault,
		Model: model, Dataset: "embedded:e4-mini", DatasetRev: "sha256:bbbb", NumExamples: len(examples), Rollouts: 1, Completed: len(examples),
		Status: artifact.StatusCompleted, Sampling: sampling, Started: day}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for i, ex := range examples {
		text := answer(t, i, ex)
		ro := &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: text}}, Turns: 1}
		sc, err := e.Score(context.Background(), ex, ro, phishing.RubricDefault)
		if err != nil {
			t.Fatal(err)
		}
		solved := sc.Solved
		r := artifact.Result{RunID: meta.RunID, Index: i, ExampleID: ex.ID, Model: model, Answer: ex.Answer, Meta: ex.Meta,
			FinalText: text, Reward: sc.Total, Components: sc.Components, Weights: sc.Weights, Parsed: sc.Parsed, Solved: &solved, Time: day}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		lines = append(append(lines, b...), '\n')
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), lines, 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err := report.FromRun(dir, "", report.Options{BootstrapReps: 100})
	if err != nil {
		t.Fatal(err)
	}
	// summary.json must not be older than the results.
	later := time.Now().Add(time.Second)
	switch state {
	case currentSummary:
		if err := report.WriteDir(dir, rep); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(dir, artifact.SummaryFile), later, later)
	case oldSummary:
		decided := keyValue(t, rep, report.KeyF1Decided)
		old := map[string]any{"env": phishing.ID, "n_rows": len(examples), "counts": map[string]int{"scored": len(examples)},
			report.KeyMetricsVersionKey: 1,
			"bootstrap":                 map[string]any{"method": report.BootstrapMethod},
			"key_metrics":               []map[string]any{{"name": "f1", "value": decided, "higher_is_better": true, "ci_lo": decided, "ci_hi": decided}}}
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.SummaryFile), old); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(dir, artifact.SummaryFile), later, later)
	}
	return dir, rep
}

// TestE4AbstainerRanksLast: on E4's test set a model that says Phishing
// on one phishing email, rightly, and abstains on the other 179 rows has
// F1 1.0 on decided rows (it topped E4's leaderboard when that was the
// main metric); ranked by f1 over every scored row it stands below
// builtin:indicators in the leaderboard and the scoreboard, whatever
// summary.json the runs hold.
func TestE4AbstainerRanksLast(t *testing.T) {
	e, examples := e4TestSet(t)
	var pos int
	for _, ex := range examples {
		if string(ex.Answer) == `"`+phishing.LabelPhishing+`"` {
			pos++
		}
	}
	if pos == 0 || len(examples) < 100 {
		t.Fatalf("test set: %d rows, %d phishing", len(examples), pos)
	}
	for _, tc := range []struct {
		name  string
		state summaryState
	}{
		{"no summary.json", noSummary},
		{"summary.json of svbench report", currentSummary},
		{"summary.json from before key_metrics_version 2", oldSummary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			_, abst := writeE4Run(t, root, e, examples, "abstain-179", e4Abstainer(examples), tc.state)
			_, base := writeE4Run(t, root, e, examples, "builtin:indicators", e4Baseline(e), tc.state)

			// The trap: on decided rows the abstainer is perfect and
			// the baseline is not.
			if a, b := keyValue(t, abst, report.KeyF1Decided), keyValue(t, base, report.KeyF1Decided); a != 1 || b >= 1 {
				t.Errorf("f1_decided: abstainer %v, baseline %v; the fixture must make the abstainer look perfect", a, b)
			}
			// One TP, 0 FP, pos−1 phishing emails abstained on (misses):
			// F1 = 2·1 / (2·1 + 0 + pos−1).
			if a, want := keyValue(t, abst, report.KeyF1), 2.0/float64(pos+1); a != want {
				t.Errorf("abstainer f1 %v, want 2/(%d+1) = %v", a, pos, want)
			}
			if a, b := keyValue(t, abst, report.KeyF1), keyValue(t, base, report.KeyF1); a >= b {
				t.Errorf("f1: abstainer %v, baseline %v", a, b)
			}
			if a, b := keyValue(t, abst, "mean_reward"), keyValue(t, base, "mean_reward"); a >= b {
				t.Errorf("mean reward: abstainer %v, baseline %v", a, b)
			}

			lb, err := leaderboard.Build([]string{root}, leaderboard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, e := range lb.Entries {
				order = append(order, fmt.Sprintf("%s #%d %s", e.Model, e.Rank, e.Grade))
				if e.MainMetric != report.KeyF1 || !e.HigherIsBetter {
					t.Errorf("%s: main metric %q (higher is better %v), want f1", e.Model, e.MainMetric, e.HigherIsBetter)
				}
			}
			if want := []string{"builtin:indicators #1 B", "abstain-179 #2 B"}; !slices.Equal(order, want) {
				t.Errorf("leaderboard %q, want %q\n%s", order, want, lb.Markdown())
			}
			if tc.state == oldSummary {
				for _, e := range lb.Entries {
					if _, ok := e.Metrics[report.KeyF1Decided]; !ok {
						t.Errorf("%s: the old summary.json was read, not recomputed: %v", e.Model, e.Metrics)
					}
				}
			}

			sb, err := report.CollectScoreboard(root, report.ScoreboardOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var sbOrder []string
			for _, r := range sb.Runs {
				sbOrder = append(sbOrder, r.Model)
			}
			if want := []string{"builtin:indicators", "abstain-179"}; !slices.Equal(sbOrder, want) {
				t.Errorf("scoreboard %q, want %q", sbOrder, want)
			}
		})
	}
}

// e4TestSet is E4 and its embedded test set.
func e4TestSet(t *testing.T) (*phishing.Environment, []env.Example) {
	t.Helper()
	e := phishing.New()
	ds, err := e.Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	return e, ds.Examples
}

// TestE4F1NamesAgree: each of E4's two F1s is shown under one name — its
// key metric's — with the same value in report.md, the terminal headline,
// scoreboard.md, leaderboard.md and the dashboard's run and leaderboard
// pages, and the dashboard's leaderboard ranks by f1; the old label "F1
// (Phishing)", which meant the decided-rows F1, is gone. An E4
// summary.json of key_metrics_version 1 is shown as outdated, its decided
// f1 replaced by the one computed now.
func TestE4F1NamesAgree(t *testing.T) {
	e, examples := e4TestSet(t)
	root := t.TempDir()
	absDir, abst := writeE4Run(t, root, e, examples, "abstain-179", e4Abstainer(examples), currentSummary)
	baseDir, base := writeE4Run(t, root, e, examples, "builtin:indicators", e4Baseline(e), currentSummary)
	names := []string{report.KeyF1, report.KeyF1Decided}
	stale := []string{"F1 (Phishing)"}

	assertNamesAgree(t, root, []namedRun{{"abstain-179", absDir, abst}, {"builtin:indicators", baseDir, base}}, names, stale, report.KeyF1)

	// A summary.json of key_metrics_version 1 (its f1 the decided 1.0).
	old := t.TempDir()
	dir, rep := writeE4Run(t, old, e, examples, "abstain-179", e4Abstainer(examples), oldSummary)
	osrv, err := web.New(old, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer osrv.Close()
	rel, _ := filepath.Rel(old, dir)
	page := serve(t, osrv, "/run?id="+filepath.ToSlash(rel))
	want := report.F(keyValue(t, rep, report.KeyF1))
	if !strings.Contains(page, `id="outdated-summary"`) || !strings.Contains(page, `<tr><td>f1</td><td class="num">`+want+`</td>`) ||
		strings.Contains(page, `<tr><td>f1</td><td class="num">1.0000</td>`) {
		t.Errorf("run page of an outdated E4 summary.json (want f1 %s, computed):\n%s", want, page)
	}
}
