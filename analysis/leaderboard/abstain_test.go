package leaderboard_test

// Issue #44, items 3 and 4: E1's accuracies carry one name each in every
// output, and abstaining cannot buy the top of the leaderboard. The runs
// are real E1 rows scored by the environment's default rubric; their
// key metrics come from its report builder.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/analysis/leaderboard"
	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/web"
)

const nRows = 150

// answerer is a model: its label and confidence for row i of gold label
// gold.
type answerer func(i int, gold string) (string, float64)

func goldOf(i int) string {
	if i%2 == 0 {
		return netlogs.LabelMalicious
	}
	return netlogs.LabelBenign
}

func otherLabel(l string) string {
	if l == netlogs.LabelMalicious {
		return netlogs.LabelBenign
	}
	return netlogs.LabelMalicious
}

// abstainer abstains on 149 of 150 rows and gets the one it answers right.
func abstainer(i int, gold string) (string, float64) {
	if i == 0 {
		return gold, 0.9
	}
	return netlogs.LabelAbstain, 0
}

// featuresLike answers most rows right, some wrong and abstains on a few,
// as builtin:features does: its accuracy on decided rows is below 1.
func featuresLike(i int, gold string) (string, float64) {
	switch {
	case i%25 == 0:
		return netlogs.LabelAbstain, 0.1
	case i%10 == 3:
		return otherLabel(gold), 0.6
	}
	return gold, 0.9
}

// summaryState is what summary.json a run directory holds.
type summaryState int

const (
	noSummary      summaryState = iota // the scoreboard computes the report
	currentSummary                     // written by svbench report
	// oldSummary is a summary.json of an svbench before
	// key_metrics_version 1: "accuracy" first, meaning accuracy on decided
	// rows. It must be recomputed, never read under the new meaning.
	oldSummary
	// v1Summary is a summary.json of key_metrics_version 1: "accuracy"
	// over every row first, but "f1" meaning F1 on decided rows (now
	// f1_decided). It must be recomputed too.
	v1Summary
)

var day = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// writeScoredRun writes a completed E1 run of model under root: metadata,
// rows scored by the default rubric, and the summary state asks for.
// It returns the run directory and the report svbench builds for it.
func writeScoredRun(t *testing.T, root, model string, answer answerer, state summaryState) (string, *report.Report) {
	t.Helper()
	dir := filepath.Join(root, "evals", "network-logs--"+strings.ReplaceAll(model, ":", "-"), "run")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	sampling, _ := json.Marshal(map[string]int{"max_tokens": 512})
	meta := artifact.Metadata{RunID: "run-" + strings.ReplaceAll(model, ":", "-"), Environment: netlogs.ID, EnvVersion: "1.0.0", Rubric: "default",
		Model: model, Dataset: "embedded:e1", DatasetRev: "sha256:aaaa", NumExamples: nRows, Rollouts: 1, Completed: nRows,
		Status: artifact.StatusCompleted, Sampling: sampling, Started: day}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), meta); err != nil {
		t.Fatal(err)
	}
	var lines []byte
	for i := range nRows {
		gold := goldOf(i)
		label, conf := answer(i, gold)
		text := fmt.Sprintf(`{"label": %q, "confidence": %g, "rationale": "r"}`, label, conf)
		sc, ok := netlogs.ScoreText(text, gold, netlogs.RubricDefault)
		if !ok {
			t.Fatal("no default rubric")
		}
		solved := sc.Solved
		r := artifact.Result{RunID: meta.RunID, Index: i, ExampleID: fmt.Sprintf("ex-%d", i), Model: model, Answer: json.RawMessage(`"` + gold + `"`),
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
		var decided float64
		for _, k := range rep.Key {
			if k.Name == report.KeyAccuracyDecided {
				decided = k.Value
			}
		}
		old := map[string]any{"env": netlogs.ID, "n_rows": nRows, "counts": map[string]int{"scored": nRows},
			"bootstrap":   map[string]any{"method": report.BootstrapMethod},
			"key_metrics": []map[string]any{{"name": "accuracy", "value": decided, "higher_is_better": true, "ci_lo": decided, "ci_hi": decided}}}
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.SummaryFile), old); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(dir, artifact.SummaryFile), later, later)
	case v1Summary:
		var all, decidedF1 float64
		for _, k := range rep.Key {
			switch k.Name {
			case report.KeyAccuracy:
				all = k.Value
			case report.KeyF1Decided:
				decidedF1 = k.Value
			}
		}
		old := map[string]any{"env": netlogs.ID, "n_rows": nRows, "counts": map[string]int{"scored": nRows},
			"bootstrap": map[string]any{"method": report.BootstrapMethod}, report.KeyMetricsVersionKey: 1,
			"key_metrics": []map[string]any{{"name": "accuracy", "value": all, "higher_is_better": true, "ci_lo": all, "ci_hi": all},
				{"name": "f1", "value": decidedF1, "higher_is_better": true, "ci_lo": decidedF1, "ci_hi": decidedF1}}}
		if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.SummaryFile), old); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(dir, artifact.SummaryFile), later, later)
	}
	return dir, rep
}

func keyValue(t *testing.T, rep *report.Report, name string) float64 {
	t.Helper()
	for _, k := range rep.Key {
		if k.Name == name {
			if k.Undefined {
				t.Fatalf("%s undefined", name)
			}
			return k.Value
		}
	}
	t.Fatalf("no key metric %s in %+v", name, rep.Key)
	return 0
}

// TestAbstainerRanksLast: a model that abstains on 149 of 150 rows and
// answers one right has accuracy_decided 1.0 (it topped the leaderboard
// with grade B when that was the main metric); ranked by accuracy over
// every row it stands below a model that answers, in the leaderboard and
// the scoreboard, whatever summary.json the runs hold.
func TestAbstainerRanksLast(t *testing.T) {
	for _, tc := range []struct {
		name  string
		state summaryState
	}{
		{"no summary.json", noSummary},
		{"summary.json of svbench report", currentSummary},
		{"summary.json from before key_metrics_version 1", oldSummary},
		{"summary.json of key_metrics_version 1", v1Summary},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			_, abst := writeScoredRun(t, root, "abstain-149", abstainer, tc.state)
			_, feat := writeScoredRun(t, root, "builtin:features", featuresLike, tc.state)

			// The trap: on decided rows the abstainer is perfect and
			// the answering model is not.
			if a, f := keyValue(t, abst, report.KeyAccuracyDecided), keyValue(t, feat, report.KeyAccuracyDecided); a != 1 || f >= 1 {
				t.Fatalf("accuracy_decided: abstainer %v, features %v; the fixture must make the abstainer look perfect", a, f)
			}
			if a := keyValue(t, abst, report.KeyAccuracy); a != 1.0/nRows {
				t.Errorf("abstainer accuracy %v, want 1/150", a)
			}
			if a := keyValue(t, abst, report.KeyDecidedRate); a != 1.0/nRows {
				t.Errorf("abstainer decided_rate %v, want 1/150", a)
			}
			if a, f := keyValue(t, abst, "mean_reward"), keyValue(t, feat, "mean_reward"); a >= f {
				t.Errorf("mean reward: abstainer %v, features %v", a, f)
			}
			// The same trap on F1 (E1's key_metrics_version 2, as E4's):
			// one right Malicious call makes f1_decided 1.0, while f1
			// counts the 74 abstentions on Malicious rows as misses.
			if a := keyValue(t, abst, report.KeyF1Decided); a != 1 {
				t.Errorf("abstainer f1_decided %v, want 1", a)
			}
			if a, f := keyValue(t, abst, report.KeyF1), keyValue(t, feat, report.KeyF1); a != 2.0/76 || f != 144.0/162 || a > f/10 {
				t.Errorf("f1: abstainer %v (want 2/76), features %v (want 144/162: TP 72, FP 15, 3 abstentions on Malicious rows)", a, f)
			}

			lb, err := leaderboard.Build([]string{root}, leaderboard.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var order []string
			for _, e := range lb.Entries {
				order = append(order, fmt.Sprintf("%s #%d %s", e.Model, e.Rank, e.Grade))
				if e.MainMetric != report.KeyAccuracy || !e.HigherIsBetter {
					t.Errorf("%s: main metric %q (higher is better %v), want accuracy", e.Model, e.MainMetric, e.HigherIsBetter)
				}
			}
			if want := []string{"builtin:features #1 B", "abstain-149 #2 B"}; !slices.Equal(order, want) {
				t.Errorf("leaderboard %q, want %q\n%s", order, want, lb.Markdown())
			}
			if tc.state == oldSummary || tc.state == v1Summary {
				for _, e := range lb.Entries {
					_, okAcc := e.Metrics[report.KeyAccuracyDecided]
					_, okF1 := e.Metrics[report.KeyF1Decided]
					if !okAcc || !okF1 {
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
			if want := []string{"builtin:features", "abstain-149"}; !slices.Equal(sbOrder, want) {
				t.Errorf("scoreboard %q, want %q", sbOrder, want)
			}
		})
	}
}

// mdCell is the cell in column col of the row whose first cell is row, in
// the first Markdown table of md that has both; a header cell matches
// with its "**" emphasis and " ↓" mark removed. ok is false when none has.
func mdCell(md, row, col string) (string, bool) {
	split := func(line string) []string {
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		return cells
	}
	lines := strings.Split(md, "\n")
	for i := 0; i+1 < len(lines); i++ {
		if !strings.HasPrefix(lines[i], "|") || !strings.HasPrefix(lines[i+1], "|---") {
			continue
		}
		head := split(lines[i])
		c := slices.IndexFunc(head, func(h string) bool { return strings.Trim(strings.TrimSuffix(h, " ↓"), "*") == col })
		for j := i + 2; j < len(lines) && strings.HasPrefix(lines[j], "|"); j++ {
			if cells := split(lines[j]); c >= 0 && c < len(cells) && slices.Contains(cells, row) {
				return cells[c], true
			}
		}
	}
	return "", false
}

func serve(t *testing.T, h http.Handler, path string) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
	}
	return rec.Body.String()
}

// TestAccuracyNamesAgree: each of E1's three accuracies and two F1s is
// shown under one name — its key metric's — with the same value in
// report.md, the terminal headline (svbench eval/report), scoreboard.md,
// leaderboard.md and the dashboard's run and leaderboard pages; the old
// labels that gave "accuracy" three meanings (and "F1 (Malicious)") are
// gone.
func TestAccuracyNamesAgree(t *testing.T) {
	root := t.TempDir()
	absDir, abst := writeScoredRun(t, root, "abstain-149", abstainer, currentSummary)
	featDir, feat := writeScoredRun(t, root, "builtin:features", featuresLike, currentSummary)
	names := []string{report.KeyAccuracy, report.KeyAccuracyDecided, report.KeyDecidedRate, report.KeyF1, report.KeyF1Decided}
	stale := []string{"accuracy (decided)", "accuracy (non-abstained)", "(non-abstained)", "accuracy on decided", "F1 (Malicious)"}

	assertNamesAgree(t, root, []namedRun{{"abstain-149", absDir, abst}, {"builtin:features", featDir, feat}}, names, stale, report.KeyAccuracy)
}

// namedRun is one scored run of a names-agree test.
type namedRun struct {
	model string
	dir   string
	rep   *report.Report
}

// assertNamesAgree checks that each key metric in names shows one value
// under its own name in report.md, the terminal headline, scoreboard.md,
// leaderboard.md and the dashboard's run and leaderboard pages, that the
// dashboard's leaderboard shows mainKey, and that no output still says a
// stale label.
func assertNamesAgree(t *testing.T, root string, runs []namedRun, names, stale []string, mainKey string) {
	t.Helper()
	sb, err := report.CollectScoreboard(root, report.ScoreboardOptions{})
	if err != nil {
		t.Fatal(err)
	}
	lb, err := leaderboard.Build([]string{root}, leaderboard.Options{})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := web.New(root, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	lbPage := serve(t, srv, "/leaderboard")
	outputs := map[string]string{"scoreboard.md": sb.Markdown(), "leaderboard.md": lb.Markdown(), "dashboard leaderboard": lbPage}

	for _, run := range runs {
		md, err := os.ReadFile(filepath.Join(run.dir, artifact.ReportFile))
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, run.dir)
		runPage := serve(t, srv, "/run?id="+filepath.ToSlash(rel))
		var headline []string
		for _, s := range run.rep.Headline {
			headline = append(headline, s.Name+": "+s.Value)
		}
		outputs[run.model+" report.md"] = string(md)
		outputs[run.model+" headline"] = strings.Join(headline, "\n")
		outputs[run.model+" dashboard run"] = runPage

		for _, name := range names {
			want := report.F(keyValue(t, run.rep, name))
			if got, ok := mdCell(string(md), name, "value"); !ok || !strings.HasPrefix(got, want) {
				t.Errorf("%s report.md: %s = %q (found %v), want %s", run.model, name, got, ok, want)
			}
			if !slices.ContainsFunc(run.rep.Headline, func(s report.Stat) bool { return s.Name == name && strings.HasPrefix(s.Value, want) }) {
				t.Errorf("%s headline lacks %s %s:\n%s", run.model, name, want, outputs[run.model+" headline"])
			}
			if got, ok := mdCell(sb.Markdown(), run.model, name); !ok || !strings.HasPrefix(got, want) {
				t.Errorf("%s scoreboard.md: %s = %q (found %v), want %s", run.model, name, got, ok, want)
			}
			if got, ok := mdCell(lb.Markdown(), run.model, name); !ok || !strings.HasPrefix(got, want) {
				t.Errorf("%s leaderboard.md: %s = %q (found %v), want %s", run.model, name, got, ok, want)
			}
			keyRow := regexp.MustCompile(`<tr><td>` + regexp.QuoteMeta(name) + `</td><td class="num">` + regexp.QuoteMeta(want) + `</td>`)
			bullet := regexp.MustCompile(`<li><b>` + regexp.QuoteMeta(name) + `</b>: ` + regexp.QuoteMeta(want))
			if !keyRow.MatchString(runPage) || !bullet.MatchString(runPage) {
				t.Errorf("%s dashboard run page: %s %s missing from the key metrics table or the headline", run.model, name, want)
			}
		}
		// The dashboard's leaderboard shows the main metric only.
		main := report.F(keyValue(t, run.rep, mainKey))
		if !regexp.MustCompile(`<td>` + regexp.QuoteMeta(run.model) + `</td>.*<td>` + regexp.QuoteMeta(mainKey) + `</td>\s*<td class="num">` + regexp.QuoteMeta(main) + `</td>`).MatchString(lbPage) {
			t.Errorf("dashboard leaderboard: %s's main metric is not %s %s", run.model, mainKey, main)
		}
	}
	for what, out := range outputs {
		for _, s := range stale {
			if strings.Contains(out, s) {
				t.Errorf("%s still says %q", what, s)
			}
		}
	}
}

// TestOutdatedSummaryOnDashboard: the run page does not show an old
// summary.json's decided-row "accuracy" as accuracy; it says the summary
// is outdated and shows the key metrics computed now.
func TestOutdatedSummaryOnDashboard(t *testing.T) {
	root := t.TempDir()
	dir, rep := writeScoredRun(t, root, "abstain-149", abstainer, oldSummary)
	srv, err := web.New(root, web.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	rel, _ := filepath.Rel(root, dir)
	page := serve(t, srv, "/run?id="+filepath.ToSlash(rel))
	want := report.F(keyValue(t, rep, report.KeyAccuracy))
	if !strings.Contains(page, `id="outdated-summary"`) || !strings.Contains(page, `<tr><td>accuracy</td><td class="num">`+want+`</td>`) ||
		strings.Contains(page, `<tr><td>accuracy</td><td class="num">1.0000</td>`) {
		t.Errorf("run page of an outdated summary.json (want accuracy %s, computed):\n%s", want, page)
	}
}
