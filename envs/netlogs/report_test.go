package netlogs

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/report/reporttest"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/report/golden from the current report builder")

// reportRow builds a svbench E1 results row.
func reportRow(i int, label string, conf float64, answer string, meta map[string]any) artifact.Result {
	return artifact.Result{
		Index: i, Answer: json.RawMessage(answer), Meta: meta, Reward: 1, FinalText: "x",
		Components: map[string]float64{"accuracy": 1, "format": 0.5},
		Parsed:     map[string]any{"predicted_label": label, "confidence": conf},
	}
}

func TestBuildReport(t *testing.T) {
	rows := []artifact.Result{
		reportRow(0, "Malicious", 0.9, `"Malicious"`, map[string]any{"scenario": "a"}), // TP
		reportRow(1, "Benign", 0.8, `"malicious"`, map[string]any{"scenario": "a"}),    // FN
		reportRow(2, "Benign", 0.6, `0`, map[string]any{"scenario": "b"}),              // TN
		reportRow(3, "Malicious", 0.3, `false`, map[string]any{"scenario": "b"}),       // FP
		reportRow(4, "Abstain", 0.5, `1`, nil),                                         // abstain
		reportRow(5, "", 0, `"Benign"`, nil),                                           // unparsed → abstain
		{Index: 6, Rollout: 1, Error: "429 rate limited", Answer: json.RawMessage(`"Benign"`)},
	}
	rep, err := report.Build("e1", rows, nil, report.Options{BootstrapReps: 200})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Summary["metrics"].(ReportMetrics)
	cm := m.Confusion
	if cm.TP != 1 || cm.FN != 1 || cm.TN != 1 || cm.FP != 1 || cm.Abstain != 2 {
		t.Errorf("confusion %+v", cm)
	}
	// cost = 10·1 + 1·1 over 4 decided rows → 1 − 11/40.
	if m.Cost.TotalCost != 11 || *m.Cost.CostWeightedAccuracy != 1-11.0/40 || *m.Abstention.AbstainRate != 2.0/6 {
		t.Errorf("cost %+v abstention %+v", m.Cost, m.Abstention)
	}
	counts := rep.Summary["counts"].(map[string]int)
	if counts["error_rows"] != 1 || counts["unparsed_rows"] != 1 || counts["scored"] != 6 || counts["abstained_explicit"] != 1 {
		t.Errorf("counts %v", counts)
	}
	if len(rep.Problems) != 2 || rep.Problems[0].Kind != report.ProblemUnparsed || rep.Problems[1].Kind != report.ProblemError || rep.Problems[1].Row != 6 {
		t.Errorf("problems %+v", rep.Problems)
	}
	bd := rep.Summary["breakdown"].(map[string][]ReportGroup)
	if g := bd["scenario"]; len(g) != 3 || g[0].N != 2 || g[2].Name != "(none)" || g[2].AccuracyDecided != nil || g[2].Accuracy == nil || *g[2].Accuracy != 0 {
		t.Errorf("scenario breakdown %+v (the (none) group only abstained: accuracy_decided n/a, accuracy 0)", g)
	}
	if _, ok := bd["difficulty"]; ok {
		t.Error("breakdown by a field no row has")
	}
	ci := rep.Summary["ci95"].(map[string]metrics.CI)
	// 2 right of 6 scored rows, 4 of them decided.
	for name, want := range map[string]float64{report.KeyAccuracy: 2.0 / 6, report.KeyAccuracyDecided: 0.5} {
		if a := ci[name]; a.Point != want || a.Lo > a.Point || a.Hi < a.Point {
			t.Errorf("%s CI %+v, want point %v", name, a, want)
		}
	}
	var names []string
	keys := map[string]float64{}
	for _, k := range rep.Key {
		names = append(names, k.Name)
		keys[k.Name] = k.Value
	}
	if want := []string{"accuracy", "accuracy_decided", "decided_rate", "f1", "f1_decided", "ece", "aurc", "cost_weighted_accuracy", "mean_reward"}; !slices.Equal(names, want) {
		t.Errorf("key metrics %q, want %q", names, want)
	}
	if k := rep.Key[2]; k.Value != 4.0/6 || !k.HigherIsBetter || rep.Key[5].HigherIsBetter {
		t.Errorf("key metrics %+v", rep.Key)
	}
	// f1 counts the abstention on Malicious row 4 as a miss (TP 1, FP 1,
	// FN 1, that miss: 2/5); the unparsed answer on Benign row 5 is neither
	// a hit nor a false alarm. f1_decided is the metrics block's
	// detection.f1 (2/4), as in E4.
	if keys[report.KeyF1] != 0.4 || keys[report.KeyF1Decided] != 0.5 || m.Detection.F1 == nil || *m.Detection.F1 != 0.5 {
		t.Errorf("key f1 %v, f1_decided %v (detection.f1 %v), want 0.4, 0.5", keys[report.KeyF1], keys[report.KeyF1Decided], m.Detection.F1)
	}
	if ci[report.KeyF1].Point != 0.4 || ci[report.KeyF1Decided].Point != 0.5 {
		t.Errorf("ci95 f1 %+v, f1_decided %+v", ci[report.KeyF1], ci[report.KeyF1Decided])
	}
	if g := bd["scenario"]; len(g) == 3 && (g[2].F1 == nil || *g[2].F1 != 0 || g[2].F1Decided != nil) {
		t.Errorf("(none) group (abstained on a Malicious and a Benign row): f1 %v, want 0; f1_decided %v, want n/a", g[2].F1, g[2].F1Decided)
	}
	// The reference block leaves the unparsed row out: 5 rows, 1 abstained.
	ref := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary)
	rm := ref.Metrics.(ReferenceMetrics)
	if ref.NExamples != 7 || ref.Environment != ReferenceEnvironment || rm.Confusion.Abstain != 1 || rm.Abstention.AbstainRate != 0.2 {
		t.Errorf("reference summary %+v %+v", ref, rm)
	}
	for _, want := range []string{"# E1 network logs", "![Reliability diagram", "reliability.svg", "## By scenario",
		"counted as an\n  abstention", "## Reference-comparable summary", "left out there (1 here)"} {
		if !strings.Contains(rep.Markdown, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if rep.Summary["env"] != ID || rep.Summary["n_rows"] != 7 {
		t.Errorf("shared summary fields %v %v", rep.Summary["env"], rep.Summary["n_rows"])
	}

	// Strict refuses and says where.
	_, err = report.Build("network-logs", rows, nil, report.Options{Strict: true, BootstrapReps: -1})
	var se *report.StrictError
	if !errors.As(err, &se) || len(se.Problems) != 2 || !strings.Contains(err.Error(), "row 7 (index 6, rollout 1): error: 429") {
		t.Errorf("strict error %v", err)
	}

	bad := []artifact.Result{reportRow(0, "Benign", 1, `"maybe"`, nil)}
	if _, err := report.Build("e1", bad, nil, report.Options{}); err == nil || !strings.Contains(err.Error(), "row 1 (index 0, rollout 0): answer must be") {
		t.Errorf("bad answer error %v", err)
	}
}

func TestReportNamesResolve(t *testing.T) {
	for _, n := range []string{"e1", "E1", "network-logs", ReferenceEnvironment, "network_logs"} {
		if id, err := report.Resolve(n); err != nil || id != ID {
			t.Errorf("Resolve(%q) = %q, %v", n, id, err)
		}
	}
}

// flatten maps a JSON object's leaves to dotted paths ("detection.tpr").
func flatten(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var obj map[string]any
	if err := json.Unmarshal(b, &obj); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{}
	var walk func(prefix string, m map[string]any)
	walk = func(prefix string, m map[string]any) {
		for k, x := range m {
			if sub, ok := x.(map[string]any); ok {
				walk(prefix+k+".", sub)
				continue
			}
			out[prefix+k] = x
		}
	}
	walk("", obj)
	return out
}

// TestReportCorners pins every E1 metric where its denominator can be
// empty: svbench's block says null, the reference block says what the
// reference generator says (0, with FNR 1 and cost-weighted accuracy 1).
func TestReportCorners(t *testing.T) {
	row := func(label, gold string) artifact.Result { return reportRow(0, label, 0.8, `"`+gold+`"`, nil) }
	undefinedDetection := map[string]any{"detection.tpr": nil, "detection.fpr": nil, "detection.fnr": nil,
		"detection.precision": nil, "detection.f1": nil, "detection.accuracy": nil, "calibration.ece": nil,
		"calibration.brier": nil, "cost.cost_weighted_accuracy": nil, "cost.total_cost": 0.0, "abstention.aurc": nil,
		"abstention.accuracy_non_abstained": nil}
	with := func(base map[string]any, kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range base {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	emptyRef := map[string]any{"detection.tpr": 0.0, "detection.fpr": 0.0, "detection.fnr": 1.0, "detection.precision": 0.0,
		"detection.f1": 0.0, "detection.accuracy": 0.0, "calibration.ece": 0.0, "calibration.brier": 0.0,
		"cost.total_cost": 0.0, "cost.cost_weighted_accuracy": 1.0, "abstention.aurc": 0.0, "abstention.accuracy_non_abstained": 0.0}
	tests := []struct {
		name      string
		rows      []artifact.Result
		own, ref  map[string]any // dotted paths that must have these values
		noRefBody bool           // no reference_summary at all
	}{
		{name: "no rows", rows: nil,
			own:       with(undefinedDetection, "abstention.abstain_rate", nil),
			noRefBody: true},
		{name: "every row abstains", rows: []artifact.Result{row("Abstain", "Malicious"), row("Abstain", "Benign")},
			own: with(undefinedDetection, "abstention.abstain_rate", 1.0, "confusion_matrix.abstain", 2.0),
			ref: with(emptyRef, "abstention.abstain_rate", 1.0, "confusion_matrix.abstain", 2.0)},
		{name: "every label unparsed", rows: []artifact.Result{row("", "Malicious"), row("", "Benign")},
			own: with(undefinedDetection, "abstention.abstain_rate", 1.0),
			// The reference drops rows without a label: nothing is left to count.
			ref: with(emptyRef, "abstention.abstain_rate", 0.0, "confusion_matrix.abstain", 0.0)},
		{name: "only API errors", rows: []artifact.Result{{Index: 0, Error: "timeout", Answer: json.RawMessage(`"Benign"`)}},
			own: with(undefinedDetection, "abstention.abstain_rate", nil),
			ref: with(emptyRef, "abstention.abstain_rate", 0.0)},
		{name: "all Malicious, all found", rows: []artifact.Result{row("Malicious", "Malicious"), row("Malicious", "Malicious")},
			own: map[string]any{"detection.tpr": 1.0, "detection.fpr": nil, "detection.fnr": 0.0, "detection.precision": 1.0, "detection.f1": 1.0, "detection.accuracy": 1.0},
			ref: map[string]any{"detection.tpr": 1.0, "detection.fpr": 0.0, "detection.fnr": 0.0, "detection.precision": 1.0, "detection.f1": 1.0}},
		{name: "all Benign, all right (no positives, none predicted)", rows: []artifact.Result{row("Benign", "Benign")},
			own: map[string]any{"detection.tpr": nil, "detection.fnr": nil, "detection.fpr": 0.0, "detection.precision": nil, "detection.f1": nil,
				"detection.accuracy": 1.0, "cost.cost_weighted_accuracy": 1.0},
			ref: map[string]any{"detection.tpr": 0.0, "detection.fnr": 1.0, "detection.fpr": 0.0, "detection.precision": 0.0, "detection.f1": 0.0,
				"detection.accuracy": 1.0, "cost.cost_weighted_accuracy": 1.0}},
		{name: "no positives, false alarms only", rows: []artifact.Result{row("Malicious", "Benign")},
			own: map[string]any{"detection.tpr": nil, "detection.fpr": 1.0, "detection.precision": 0.0, "detection.f1": 0.0,
				"cost.total_cost": 1.0, "cost.cost_weighted_accuracy": 0.9},
			ref: map[string]any{"detection.tpr": 0.0, "detection.fnr": 1.0, "detection.fpr": 1.0, "detection.precision": 0.0, "detection.f1": 0.0,
				"cost.cost_weighted_accuracy": 0.9}},
		{name: "positives, none predicted", rows: []artifact.Result{row("Benign", "Malicious"), row("Benign", "Benign")},
			own: map[string]any{"detection.tpr": 0.0, "detection.fnr": 1.0, "detection.precision": nil, "detection.f1": 0.0,
				"cost.total_cost": 10.0, "cost.cost_weighted_accuracy": 0.5},
			ref: map[string]any{"detection.tpr": 0.0, "detection.fnr": 1.0, "detection.precision": 0.0, "detection.f1": 0.0,
				"cost.cost_weighted_accuracy": 0.5}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := report.Build("e1", tc.rows, nil, report.Options{BootstrapReps: 20})
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(rep.Summary)
			if err != nil || bytes.Contains(b, []byte("NaN")) {
				t.Fatalf("summary not clean JSON: %v", err)
			}
			check := func(what string, got, want map[string]any) {
				for k, w := range want {
					g, ok := got[k]
					if !ok {
						t.Errorf("%s: %s missing", what, k)
						continue
					}
					if fmt.Sprint(g) != fmt.Sprint(w) {
						t.Errorf("%s: %s = %v, want %v", what, k, g, w)
					}
				}
			}
			check("svbench block", flatten(t, rep.Summary["metrics"]), tc.own)
			ref, ok := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary)
			if tc.noRefBody {
				if ok {
					t.Errorf("reference summary for a run without rows: %+v", ref)
				}
				return
			}
			if !ok {
				t.Fatal("no reference summary")
			}
			check("reference block", flatten(t, ref.Metrics), tc.ref)
			reporttest.ValidateReferenceSummary(t, ref) // last: skips without ../shared
		})
	}
}

// TestReportGolden proves the report is byte-identical for a fixed results
// file: summary.json, report.md and every chart.
func TestReportGolden(t *testing.T) {
	dir := filepath.Join("testdata", "report")
	for range 2 { // and the same again: nothing depends on map order or time
		rep, err := report.FromRun(dir, "", report.Options{BootstrapReps: 200})
		if err != nil {
			t.Fatal(err)
		}
		reporttest.CheckGolden(t, rep, filepath.Join(dir, "golden"), *updateGolden)
	}
}

func TestReferenceSummarySchema(t *testing.T) {
	rep, err := report.FromRun(filepath.Join("testdata", "report"), "", report.Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	ref := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary)
	if ref.RunID != "golden-netlogs" || ref.Model != "fixture-model" || ref.Timestamp != "2025-01-01T00:00:00Z" || ref.Version != "0.1.0" {
		t.Errorf("envelope %+v", ref)
	}
	reporttest.ValidateReferenceSummary(t, ref)
}

func BenchmarkBuildReport(b *testing.B) {
	const n = 100_000
	rows := make([]artifact.Result, n)
	labels := []string{"Malicious", "Benign", "Abstain", ""}
	for i := range rows {
		ans := `"Malicious"`
		if i%2 == 0 {
			ans = `"Benign"`
		}
		rows[i] = reportRow(i, labels[i*7%4], float64(i%101)/100, ans, map[string]any{"scenario": fmt.Sprint("s", i%12)})
	}
	for _, reps := range []int{-1, 1000} {
		b.Run(fmt.Sprintf("rows=100k/bootstrap=%d", max(reps, 0)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := report.Build("e1", rows, nil, report.Options{BootstrapReps: reps}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
