package phishing

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/report/reporttest"
)

func e4Row(idx int, gold, pred string, conf float64, campaign string, extra map[string]any) artifact.Result {
	parsed := map[string]any{"predicted_label": pred, "confidence": conf, "evidence_items": 0.0}
	for k, v := range extra {
		parsed[k] = v
	}
	ans, _ := json.Marshal(gold)
	return artifact.Result{Index: idx, Answer: ans, Parsed: parsed, Meta: map[string]any{"campaign": campaign}, Reward: 1,
		Components: map[string]float64{"accuracy": 1}}
}

// TestUndefinedPrecisionIsNull: with no Phishing call, E4's precision is
// undefined and reported as null, as E1 reports it (issue #21: E4 wrote 0).
func TestUndefinedPrecisionIsNull(t *testing.T) {
	rows := []artifact.Result{
		e4Row(0, "Phishing", "Legitimate", 0.9, "x", nil),
		e4Row(1, "Legitimate", "Legitimate", 0.9, "x", nil),
	}
	r, err := report.Build("e4", rows, nil, report.Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(r.Summary["metrics"])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"precision":null`) {
		t.Errorf("metrics %s: want precision null", b)
	}
	for _, k := range r.Key {
		if k.Name == "f1" && k.Undefined {
			t.Error("f1 is defined (a missed positive): 0")
		}
	}
}

func TestBuildReport(t *testing.T) {
	rows := []artifact.Result{
		e4Row(0, "Phishing", "Phishing", 0.9, "credential_harvest", map[string]any{"evidence_items": 2.0, "evidence_precision": 1.0, "evidence_recall": 0.5}),
		e4Row(1, "Phishing", "Legitimate", 0.8, "credential_harvest", map[string]any{"evidence_recall": 0.0}),
		e4Row(2, "Legitimate", "Legitimate", 0.7, "legit_receipt", nil),
		e4Row(3, "Legitimate", "Phishing", 0.6, "legit_receipt", map[string]any{"evidence_items": 1.0, "evidence_precision": 0.0}),
		e4Row(4, "Phishing", "Abstain", 0.5, "gift_card", nil),
		e4Row(5, "Legitimate", "", 0, "legit_receipt", nil),
		{Index: 6, Answer: json.RawMessage(`"Phishing"`), Error: "timeout"},
		e4Row(7, "Abstain", "Phishing", 0.9, "x", nil),
	}
	r, err := report.Build("e4", rows, nil, report.Options{BootstrapReps: 50})
	if err != nil {
		t.Fatal(err)
	}
	m := r.Summary["metrics"].(ReportMetrics)
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	nearP := func(name string, got *float64, want float64) {
		if got == nil {
			t.Errorf("%s undefined, want %v", name, want)
			return
		}
		near(name, *got, want)
	}
	nearP("precision", m.Detection.Precision, 0.5)
	nearP("recall", m.Detection.Recall, 0.5)
	nearP("f1", m.Detection.F1, 0.5)
	nearP("fnr", m.Detection.FNR, 0.5)
	nearP("fpr", m.Detection.FPR, 0.5)
	nearP("accuracy", m.Detection.Accuracy, 0.5)
	near("abstain rate", m.Abstention.AbstainRate, 2.0/6)
	near("brier", m.Calibration.Brier, 0.275)
	nearP("evidence precision", m.Evidence.Precision, 0.5)
	nearP("evidence recall", m.Evidence.Recall, 0.25)
	near("total cost", m.Cost.TotalCost, 11)
	// Key metrics: f1 ranks and counts the abstention on phishing row 4
	// as a miss (TP 1, FP 1, FN 1, that miss: 2/5); the unparsed answer on
	// legitimate row 5 is neither a hit nor a false alarm. f1_decided is
	// the metrics block's detection.f1.
	var names []string
	keys := map[string]float64{}
	for _, k := range r.Key {
		names = append(names, k.Name)
		keys[k.Name] = k.Value
	}
	if want := []string{report.KeyF1, report.KeyF1Decided, report.KeyAccuracy, report.KeyAccuracyDecided, report.KeyDecidedRate,
		"fnr", "ece", "aurc", "evidence_precision", "mean_reward"}; !slices.Equal(names, want) {
		t.Errorf("key metrics %q, want %q", names, want)
	}
	near("key f1", keys[report.KeyF1], 0.4)
	near("key f1_decided", keys[report.KeyF1Decided], 0.5)
	near("key accuracy", keys[report.KeyAccuracy], 2.0/6)
	near("key decided_rate", keys[report.KeyDecidedRate], 4.0/6)
	if ci := r.Summary["ci95"].(map[string]metrics.CI); ci[report.KeyF1].Point != 0.4 || ci[report.KeyF1Decided].Point != 0.5 {
		t.Errorf("ci95 f1 %+v, f1_decided %+v", ci[report.KeyF1], ci[report.KeyF1Decided])
	}
	counts := r.Summary["counts"].(map[string]int)
	if counts["error_rows"] != 1 || counts["unparsed_rows"] != 1 || counts["gold_abstain_rows"] != 1 || counts["scored"] != 6 {
		t.Errorf("counts %v", counts)
	}
	gs := r.Summary["breakdown"].(map[string][]ReportGroup)["campaign"]
	if len(gs) != 3 || gs[0].N != 3 {
		t.Errorf("campaign breakdown %+v", gs)
	}
	dir := t.TempDir()
	if err := report.WriteDir(dir, r); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"summary.json", "report.md", "reliability.svg", "risk_coverage.svg", "confusion.svg", "campaign_accuracy.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("missing %s", f)
		}
	}
	md, _ := os.ReadFile(filepath.Join(dir, "report.md"))
	if !strings.Contains(string(md), "## By campaign") || !strings.Contains(string(md), "evidence precision") {
		t.Errorf("report.md lacks the campaign breakdown or evidence metrics")
	}
	if _, err := report.Build("e4", rows, nil, report.Options{Strict: true, BootstrapReps: -1}); err == nil {
		t.Error("strict mode accepted error and unparsed rows")
	}
	bad := []artifact.Result{{Answer: json.RawMessage(`"Maybe"`), Parsed: map[string]any{}}}
	if _, err := report.Build("phishing-detection", bad, nil, report.Options{}); err == nil || !strings.Contains(err.Error(), "row 1") {
		t.Errorf("bad answer: %v", err)
	}
}

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/report/golden from the current report builder")

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
