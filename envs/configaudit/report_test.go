package configaudit

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/metrics"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/report/reporttest"
)

var updateGolden = flag.Bool("update-golden", false, "rewrite testdata/report/golden from the current report builder")

func resultRow(t *testing.T, parsed string, calls []env.ToolCallRecord) artifact.Result {
	t.Helper()
	var p map[string]any
	if err := json.Unmarshal([]byte(parsed), &p); err != nil {
		t.Fatal(err)
	}
	return artifact.Result{Parsed: p, ToolCalls: calls, Turns: 2, Reward: 1}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// val reads an optional metric, NaN when undefined, so comparisons fail.
func val(p *float64) float64 {
	if p == nil {
		return math.NaN()
	}
	return *p
}

func TestBuildReport(t *testing.T) {
	rows := []artifact.Result{
		// found both (high + low), patch applied, fixed the high one
		resultRow(t, `{"valid_json": true, "format_valid": true, "fixture_type": "k8s",
			"predicted": [{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}],
			"oracle": [{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}],
			"fixable": [{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}],
			"fixed": [{"id": "a", "severity": "high"}], "introduced": [],
			"patch_provided": true, "patch_applied": true}`,
			[]env.ToolCallRecord{{Name: FnKubeLinter, DurationMS: 4, Findings: new(2)}}),
		// clean file, false positive, no patch
		resultRow(t, `{"valid_json": true, "format_valid": false, "fixture_type": "tf",
			"predicted": [{"id": "c", "severity": "med"}], "oracle": [], "fixable": [], "fixed": [], "introduced": [],
			"patch_provided": false, "patch_applied": false}`, nil),
		// clean file, passed
		resultRow(t, `{"valid_json": true, "format_valid": true, "fixture_type": "tf",
			"predicted": [], "oracle": [], "fixed": [], "introduced": [{"id": "d", "severity": "low"}],
			"patch_provided": true, "patch_applied": false}`, nil),
	}
	rows = append(rows, artifact.Result{Error: "timeout"})
	rep, err := report.Build("e2", rows, nil, report.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Summary["metrics"].(ReportMetrics)
	// Bootstrap intervals surround the point estimates they resample.
	ci := rep.Summary["ci95"].(map[string]metrics.CI)
	for name, point := range map[string]float64{"f1_weighted": val(m.Weighted.F1), "patch_fix_rate": val(m.PatchFixRate)} {
		c := ci[name]
		if !near(c.Point, point) || c.Lo > point+1e-9 || c.Hi < point-1e-9 {
			t.Errorf("ci %s = %+v, point %v", name, c, point)
		}
	}
	// weighted: TP 1.3, FP 0.6, FN 0
	if !near(val(m.Weighted.Precision), 1.3/1.9) || !near(val(m.Weighted.Recall), 1) {
		t.Errorf("weighted %+v", m.Weighted)
	}
	if !near(val(m.Unweighted.Precision), 2.0/3) || !near(val(m.PositiveOnlyF1), 1) {
		t.Errorf("unweighted %+v positive-only %v", m.Unweighted, m.PositiveOnlyF1)
	}
	if m.CleanRows != 2 || !near(val(m.CleanPassRate), 0.5) || !near(val(m.FPRateOnClean), 0.5) {
		t.Errorf("clean %d %v %v", m.CleanRows, m.CleanPassRate, m.FPRateOnClean)
	}
	if !near(val(m.PatchProvidedRate), 2.0/3) || !near(val(m.PatchSuccessRate), 0.5) || !near(val(m.PatchFixRate), 1/1.3) || m.NewViolations != 1 {
		t.Errorf("patch %+v", m)
	}
	if m.Severity["high"].Fixed != 1 || m.Severity["low"].Found != 1 || m.Tools[FnKubeLinter].Calls != 1 || !near(val(m.MeanToolCalls), 1.0/3) {
		t.Errorf("severity/tools %+v %+v", m.Severity, m.Tools)
	}
	if tf := m.ByFixture["tf"]; tf.Recall != nil || val(tf.Precision) != 0 || val(tf.F1) != 0 {
		t.Errorf("tf rows: nothing to find (recall n/a), one false positive (precision and F1 0): %+v", tf)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Markdown, "Per severity") || len(rep.Charts) < 2 {
		t.Errorf("problems %v, charts %d", rep.Problems, len(rep.Charts))
	}

	// The reference's block: macro averages over the 3 episodes.
	ref := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary)
	rm := ref.Metrics.(ReferenceMetrics)
	fq, p, te, ep := rm.FindingQuality, rm.Patch, rm.ToolEconomy, rm.Episode
	for name, c := range map[string][2]float64{
		"precision_weighted": {fq.PrecisionWeighted, 1.0 / 3}, "recall_weighted": {fq.RecallWeighted, 1.0 / 3},
		"f1_unweighted": {fq.F1Unweighted, 1.0 / 3}, "f1_weighted_positive_only": {fq.F1WeightedPositiveOnly, 1},
		"patch_provided_rate": {p.PatchProvidedRate, 2.0 / 3}, "patch_success_rate": {p.PatchSuccessRate, 0.5},
		"patch_fix_rate": {p.PatchFixRate, 1 / 1.3}, "mean_violations_fixed": {p.MeanViolationsFixed, 1},
		"new_violations_introduced": {p.NewViolationsIntroduced, 0}, "mean_tool_calls": {te.MeanToolCalls, 1.0 / 3},
		"mean_tool_time_ms": {te.MeanToolTimeMS, 4.0 / 3}, "calls_per_finding": {te.CallsPerFinding, 1.0 / 3},
		"format_valid_rate": {ep.FormatValidRate, 1}, "mean_turns": {ep.MeanTurns, 2},
		"clean_pass_rate": {ep.CleanPassRate, 0.5}, "false_positive_rate_on_clean": {ep.FalsePositiveRateOnClean, 0.5},
	} {
		if !near(c[0], c[1]) {
			t.Errorf("reference %s = %v, want %v", name, c[0], c[1])
		}
	}
	if d := te.ToolDistribution["kube-linter"]; d.Calls != 1 || d.TimeMS != 4 || len(te.ToolDistribution) != 3 {
		t.Errorf("tool distribution %+v", te.ToolDistribution)
	}
	sev := ref.SeverityBreakdown.(map[string]SeverityCounts)
	if sev["high"] != (SeverityCounts{1, 1, 1}) || sev["low"] != (SeverityCounts{1, 1, 0}) || sev["med"] != (SeverityCounts{}) {
		t.Errorf("severity breakdown %+v", sev)
	}
	if ref.NExamples != 3 || ref.Environment != ReferenceEnvironment {
		t.Errorf("envelope %+v", ref)
	}
	if _, err := report.Build("e2", []artifact.Result{{Parsed: map[string]any{}}}, nil, report.Options{}); err == nil {
		t.Error("row without parsed.oracle accepted")
	}
	reporttest.ValidateReferenceSummary(t, ref) // last: skips without ../shared
}

// TestReportReferenceScope checks that the reference block scores only the
// primary tool's ids, as the reference does, while svbench's scores all.
func TestReportReferenceScope(t *testing.T) {
	row := resultRow(t, `{"valid_json": true, "format_valid": true, "fixture_type": "k8s",
		"predicted": [{"id": "kube-linter/a", "severity": "high"}, {"id": "opa/x", "severity": "high"}],
		"oracle": [{"id": "kube-linter/a", "severity": "high"}, {"id": "opa/y", "severity": "med"}],
		"fixable": [], "fixed": [], "introduced": [], "patch_provided": false, "patch_applied": false}`, nil)
	rep, err := report.Build("e2", []artifact.Result{row}, nil, report.Options{BootstrapReps: -1})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Summary["metrics"].(ReportMetrics)
	rm := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary).Metrics.(ReferenceMetrics)
	if !near(val(m.Weighted.Precision), 0.5) || !near(val(m.Weighted.Recall), 1/1.6) {
		t.Errorf("svbench block scores every tool: %+v", m.Weighted)
	}
	if fq := rm.FindingQuality; fq.PrecisionWeighted != 1 || fq.RecallWeighted != 1 || rm.ToolEconomy.CallsPerFinding != 0 {
		t.Errorf("reference block keeps kube-linter ids only: %+v", fq)
	}
}

// TestReportCorners pins every E2 metric where its denominator can be
// empty: svbench's block says null, the reference's block says 0.
func TestReportCorners(t *testing.T) {
	ep := func(pred, oracle, fixed string, provided, applied bool, calls ...env.ToolCallRecord) artifact.Result {
		return resultRow(t, fmt.Sprintf(`{"valid_json": true, "format_valid": true, "fixture_type": "k8s",
			"predicted": %s, "oracle": %s, "fixable": %s, "fixed": %s, "introduced": [],
			"patch_provided": %t, "patch_applied": %t}`, pred, oracle, oracle, fixed, provided, applied), calls)
	}
	const (
		none = `[]`
		high = `[{"id": "a", "severity": "high"}]`
		low  = `[{"id": "b", "severity": "low"}]`
	)
	call := env.ToolCallRecord{Name: FnKubeLinter, DurationMS: 2}
	tests := []struct {
		name   string
		rows   []artifact.Result
		own    map[string]any // dotted path → value in svbench's block (nil = null)
		ref    map[string]any // dotted path → value in the reference block
		noRefs bool
	}{
		{name: "no rows",
			own: map[string]any{"weighted.precision": nil, "weighted.recall": nil, "weighted.f1": nil, "mean_f1_weighted": nil,
				"positive_only_f1": nil, "patch_provided_rate": nil, "mean_tool_calls": nil, "format_valid_rate": nil,
				"mean_turns": nil, "clean_pass_rate": nil, "false_positive_rate_on_clean": nil, "calls_per_finding": nil},
			noRefs: true},
		{name: "only API errors", rows: []artifact.Result{{Error: "timeout"}},
			own:    map[string]any{"weighted.f1": nil, "patch_provided_rate": nil, "mean_turns": nil},
			noRefs: true},
		{name: "empty oracle everywhere, nothing predicted", rows: []artifact.Result{ep(none, none, none, false, false)},
			own: map[string]any{"weighted.precision": nil, "weighted.recall": nil, "weighted.f1": nil, "unweighted.f1": nil,
				"positive_only_f1": nil, "clean_pass_rate": 1.0, "false_positive_rate_on_clean": 0.0, "mean_f1_weighted": 0.0},
			ref: map[string]any{"finding_quality.precision_weighted": 0.0, "finding_quality.recall_weighted": 0.0, "finding_quality.f1_weighted": 0.0,
				"finding_quality.f1_weighted_positive_only": 0.0, "finding_quality.f1_unweighted_positive_only": 0.0,
				"episode.clean_pass_rate": 1.0, "episode.false_positive_rate_on_clean": 0.0}},
		{name: "empty oracle everywhere, false positives", rows: []artifact.Result{ep(high, none, none, false, false)},
			own: map[string]any{"weighted.precision": 0.0, "weighted.recall": nil, "weighted.f1": 0.0, "positive_only_f1": nil,
				"clean_pass_rate": 0.0, "false_positive_rate_on_clean": 1.0},
			ref: map[string]any{"finding_quality.precision_weighted": 0.0, "finding_quality.recall_weighted": 0.0,
				"finding_quality.f1_weighted_positive_only": 0.0, "episode.false_positive_rate_on_clean": 1.0}},
		{name: "nothing predicted, findings to find", rows: []artifact.Result{ep(none, high, none, false, false)},
			own: map[string]any{"weighted.precision": nil, "weighted.recall": 0.0, "weighted.f1": 0.0, "positive_only_f1": 0.0,
				"clean_pass_rate": nil, "false_positive_rate_on_clean": nil, "calls_per_finding": nil},
			ref: map[string]any{"finding_quality.precision_weighted": 0.0, "finding_quality.recall_weighted": 0.0,
				"episode.clean_pass_rate": 0.0, "episode.false_positive_rate_on_clean": 0.0, "tool_economy.calls_per_finding": 0.0}},
		{name: "no patches", rows: []artifact.Result{ep(high, high, none, false, false)},
			own: map[string]any{"patch_provided_rate": 0.0, "patch_success_rate": nil, "patch_fix_rate": nil,
				"mean_violations_fixed": 0.0, "mean_new_violations_introduced": 0.0},
			ref: map[string]any{"patch.patch_provided_rate": 0.0, "patch.patch_success_rate": 0.0, "patch.patch_fix_rate": 0.0,
				"patch.mean_violations_fixed": 0.0, "patch.new_violations_introduced": 0.0}},
		{name: "patches given, none applied", rows: []artifact.Result{ep(high, high, none, true, false)},
			own: map[string]any{"patch_provided_rate": 1.0, "patch_success_rate": 0.0, "patch_fix_rate": nil},
			ref: map[string]any{"patch.patch_provided_rate": 1.0, "patch.patch_success_rate": 0.0, "patch.patch_fix_rate": 0.0}},
		{name: "patch applied to a clean file", rows: []artifact.Result{ep(none, none, none, true, true)},
			own: map[string]any{"patch_success_rate": 1.0, "patch_fix_rate": nil},
			ref: map[string]any{"patch.patch_success_rate": 1.0, "patch.patch_fix_rate": 0.0, "patch.mean_violations_fixed": 0.0}},
		{name: "patch fixes one of two", rows: []artifact.Result{ep(high, `[{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}]`, high, true, true)},
			own: map[string]any{"patch_fix_rate": 1 / 1.3, "mean_violations_fixed": 1.0},
			ref: map[string]any{"patch.patch_fix_rate": 1 / 1.3, "patch.mean_violations_fixed": 1.0}},
		{name: "tool calls, no findings returned", rows: []artifact.Result{ep(low, low, none, false, false, call, call)},
			own: map[string]any{"mean_tool_calls": 2.0, "calls_per_finding": nil, "mean_tool_time_ms": 4.0},
			ref: map[string]any{"tool_economy.mean_tool_calls": 2.0, "tool_economy.calls_per_finding": 2.0,
				"tool_economy.tool_distribution.kube-linter.calls": 2.0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := report.Build("e2", tc.rows, nil, report.Options{BootstrapReps: 20})
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
					gf, gok := g.(float64)
					wf, wok := w.(float64)
					if gok && wok && near(gf, wf) || g == nil && w == nil {
						continue
					}
					t.Errorf("%s: %s = %v, want %v", what, k, g, w)
				}
			}
			check("svbench block", flatten(t, rep.Summary["metrics"]), tc.own)
			ref, ok := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary)
			if tc.noRefs {
				if ok {
					t.Errorf("reference summary without scored rows: %+v", ref)
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

// flatten maps a JSON object's leaves to dotted paths ("weighted.f1").
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
	if ref.RunID != "golden-configaudit" || ref.NExamples != 29 || ref.SeverityBreakdown == nil {
		t.Errorf("envelope %+v", ref)
	}
	reporttest.ValidateReferenceSummary(t, ref)
}
