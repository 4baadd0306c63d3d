package report

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/metrics"
)

func e2Row(t *testing.T, parsed string, calls []env.ToolCallRecord) artifact.Result {
	var p map[string]any
	if err := json.Unmarshal([]byte(parsed), &p); err != nil {
		t.Fatal(err)
	}
	return artifact.Result{Parsed: p, ToolCalls: calls, Turns: 2, Reward: 1}
}

func TestBuildE2Metrics(t *testing.T) {
	rows := []artifact.Result{
		// found both (high + low), patch applied, fixed the high one
		e2Row(t, `{"valid_json": true, "format_valid": true, "fixture_type": "k8s",
			"predicted": [{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}],
			"oracle": [{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}],
			"fixable": [{"id": "a", "severity": "high"}, {"id": "b", "severity": "low"}],
			"fixed": [{"id": "a", "severity": "high"}], "introduced": [],
			"patch_provided": true, "patch_applied": true}`,
			[]env.ToolCallRecord{{Name: "run_kubelinter", DurationMS: 4, Findings: 2}}),
		// clean file, false positive, no patch
		e2Row(t, `{"valid_json": true, "format_valid": false, "fixture_type": "tf",
			"predicted": [{"id": "c", "severity": "med"}], "oracle": [], "fixable": [], "fixed": [], "introduced": [],
			"patch_provided": false, "patch_applied": false}`, nil),
		// clean file, passed
		e2Row(t, `{"valid_json": true, "format_valid": true, "fixture_type": "tf",
			"predicted": [], "oracle": [], "fixed": [], "introduced": [{"id": "d", "severity": "low"}],
			"patch_provided": true, "patch_applied": false}`, nil),
	}
	rows = append(rows, artifact.Result{Error: "timeout"})
	rep, err := BuildE2(rows, nil, Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := rep.Summary["metrics"].(E2Metrics)
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-9 }
	// Bootstrap intervals surround the point estimates they resample.
	ci := rep.Summary["ci95"].(map[string]metrics.CI)
	for name, point := range map[string]float64{"f1_weighted": m.Weighted.F1, "patch_fix_rate": m.PatchFixRate} {
		c := ci[name]
		if !near(c.Point, point) || c.Lo > point+1e-9 || c.Hi < point-1e-9 {
			t.Errorf("ci %s = %+v, point %v", name, c, point)
		}
	}
	// weighted: TP 1.3, FP 0.6, FN 0
	if !near(m.Weighted.Precision, 1.3/1.9) || !near(m.Weighted.Recall, 1) {
		t.Errorf("weighted %+v", m.Weighted)
	}
	if !near(m.Unweighted.Precision, 2.0/3) || !near(m.PositiveOnlyF1, 1) {
		t.Errorf("unweighted %+v positive-only %v", m.Unweighted, m.PositiveOnlyF1)
	}
	if m.CleanRows != 2 || !near(m.CleanPassRate, 0.5) || !near(m.FPRateOnClean, 0.5) {
		t.Errorf("clean %d %v %v", m.CleanRows, m.CleanPassRate, m.FPRateOnClean)
	}
	if !near(m.PatchProvidedRate, 2.0/3) || !near(m.PatchSuccessRate, 0.5) || !near(m.PatchFixRate, 1/1.3) || m.NewViolations != 1 {
		t.Errorf("patch %+v", m)
	}
	if m.Severity["high"].Fixed != 1 || m.Severity["low"].Found != 1 || m.Tools["run_kubelinter"].Calls != 1 || !near(m.MeanToolCalls, 1.0/3) {
		t.Errorf("severity/tools %+v %+v", m.Severity, m.Tools)
	}
	if len(rep.Problems) != 1 || !strings.Contains(rep.Markdown, "Per severity") || len(rep.Charts) < 2 {
		t.Errorf("problems %v, charts %d", rep.Problems, len(rep.Charts))
	}
	if _, err := BuildE2([]artifact.Result{{Parsed: map[string]any{}}}, nil, Options{}); err == nil {
		t.Error("row without parsed.oracle accepted")
	}
}
