package compare

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/metrics"
)

func lrow(key, gold, pred string, conf float64) Row {
	return Row{Key: key, Values: map[string]float64{"reward": 0}, Label: &Labelled{Gold: gold, Predicted: pred, Confidence: conf, HasConfidence: true}}
}

// TestRunMetricsByHand: four examples, one rollout each.
//
//	example  gold  A (conf)     B (conf)
//	e1       M     M (.9)       M (.9)
//	e2       B     M (.8)       B (.8)
//	e3       M     B (.6)       M (.7)
//	e4       B     Abstain (.5) B (.9)
//
// A: F1(M) = 2·1/(2·1+1+1) = .5, F1(B) = 0/(0+1+2) = 0, macro .25;
// decided e1–e3, one right: accuracy 1/3; ECE over bins 9, 8, 6 with one
// row each = (|1−.9| + |0−.8| + |0−.6|)/3 = .5.
// B: every answer right: macro-F1 1, accuracy 1; ECE = 2/4·|1−.9| +
// 1/4·|1−.8| + 1/4·|1−.7| = .175.
func TestRunMetricsByHand(t *testing.T) {
	a := []Row{lrow("e1/0", "M", "M", .9), lrow("e2/0", "B", "M", .8), lrow("e3/0", "M", "B", .6), lrow("e4/0", "B", "Abstain", .5)}
	b := []Row{lrow("e1/0", "M", "M", .9), lrow("e2/0", "B", "B", .8), lrow("e3/0", "M", "M", .7), lrow("e4/0", "B", "B", .9)}
	qs := RunMetrics(Pair(a, b), Options{Reps: 500, Seed: 7})
	want := map[string][2]float64{MetricMacroF1: {.25, 1}, MetricAccDecid: {1.0 / 3, 1}, MetricECE: {.5, .175}}
	if len(qs) != 3 {
		t.Fatalf("%d metrics: %+v", len(qs), qs)
	}
	for _, q := range qs {
		w := want[q.Name]
		if math.Abs(q.MeanA-w[0]) > 1e-9 || math.Abs(q.MeanB-w[1]) > 1e-9 || math.Abs(q.Diff-(w[1]-w[0])) > 1e-9 {
			t.Errorf("%s: %v → %v, want %v", q.Name, q.MeanA, q.MeanB, w)
		}
		if q.N != 4 || !q.RunLevel || q.DiffLo > q.Diff+1e-12 || q.DiffHi < q.Diff-1e-12 || q.P <= 0 || q.P > 1 {
			t.Errorf("%s: n %d interval [%v, %v] around %v, p %v", q.Name, q.N, q.DiffLo, q.DiffHi, q.Diff, q.P)
		}
	}
	// Same seed, same numbers.
	again := RunMetrics(Pair(a, b), Options{Reps: 500, Seed: 7})
	for i := range qs {
		if qs[i] != again[i] {
			t.Errorf("not reproducible: %+v vs %+v", qs[i], again[i])
		}
	}
	// With four examples, swapping answers reaches |Δ macro-F1| ≥ .75 in
	// few of the 16 swap patterns: p is well above 0 (no false certainty
	// from four examples) but below 1.
	if q := qs[0]; q.P < 1.0/16 || q.P >= 1 {
		t.Errorf("macro-F1 p = %v", q.P)
	}
}

func TestRunMetricsNullAndClusters(t *testing.T) {
	var a []Row
	for _, ex := range []string{"x", "y", "z"} {
		for _, r := range []string{"/0", "/1"} {
			a = append(a, lrow(ex+r, "M", "M", .9), lrow(ex+"b"+r, "B", "M", .6))
		}
	}
	// Identical runs: Δ 0, interval [0, 0], p 1; examples are the clusters
	// ("x/0" and "x/1" are one example, "xb/0" and "xb/1" another).
	for _, q := range RunMetrics(Pair(a, a), Options{Reps: 200}) {
		if q.Diff != 0 || q.DiffLo != 0 || q.DiffHi != 0 || q.P != 1 {
			t.Errorf("%s on identical runs: %+v", q.Name, q)
		}
		if q.N != 6 {
			t.Errorf("%s: %d examples, want 6", q.Name, q.N)
		}
	}
	// Rows without labels (E2-style) give no run-level metrics.
	plain := []Row{{Key: "e/0", Values: map[string]float64{"reward": 1}}}
	if qs := RunMetrics(Pair(plain, plain), Options{}); qs != nil {
		t.Errorf("unlabelled rows: %+v", qs)
	}
}

// TestRunMetricsECEMatchesMetrics: the count-vector ECE is the one
// metrics.Calibration computes.
func TestRunMetricsECEMatchesMetrics(t *testing.T) {
	var a, b []Row
	var cal metrics.Calibration
	for i := range 300 {
		gold := []string{"M", "B"}[i%2]
		pred := []string{"M", "B", "Abstain", ""}[(i*7)%4]
		conf := math.Mod(float64(i)*0.137, 1.2) - 0.1 // some outside [0, 1]
		key := strconv.Itoa(i) + "/0"
		a = append(a, lrow(key, gold, pred, conf))
		b = append(b, lrow(key, gold, gold, 1))
		if pred != "" && pred != "Abstain" {
			cal.Add(conf, pred == gold)
		}
	}
	for _, q := range RunMetrics(Pair(a, b), Options{Reps: 10}) {
		if q.Name == MetricECE && math.Abs(q.MeanA-cal.ECE()) > 1e-9 {
			t.Errorf("ECE %v, metrics.Calibration %v", q.MeanA, cal.ECE())
		}
	}
}

// TestLoadReadsLabels: results rows with a string answer and a parsed
// predicted label become labelled rows; Runs reports their run-level
// metrics and the markdown shows them.
func TestLoadReadsLabels(t *testing.T) {
	write := func(preds []string) string {
		dir := t.TempDir()
		var lines []byte
		for i, p := range preds {
			r := artifact.Result{Index: i, ExampleID: "e" + strconv.Itoa(i), Answer: json.RawMessage(`"Malicious"`), FinalText: "x",
				Reward: 1, Parsed: map[string]any{"predicted_label": p, "confidence": 0.8, "confidence_valid": p != ""}}
			b, _ := json.Marshal(r)
			lines = append(append(lines, b...), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), lines, 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	a, err := Load(write([]string{"Malicious", "Benign", "", "Abstain"}))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Load(write([]string{"Malicious", "Malicious", "Malicious", "Malicious"}))
	if err != nil {
		t.Fatal(err)
	}
	if a.Rows[2].Label == nil || a.Rows[2].Label.HasConfidence || !a.Rows[0].Label.HasConfidence {
		t.Fatalf("labels: %+v %+v", a.Rows[2].Label, a.Rows[0].Label)
	}
	c, err := Runs(a, b, Options{Reps: 100})
	if err != nil {
		t.Fatal(err)
	}
	// A decided 2 of 4 (1 right): accuracy .5; B 4 of 4 right.
	var acc *Quantity
	for i := range c.Metrics {
		if c.Metrics[i].Name == MetricAccDecid {
			acc = &c.Metrics[i]
		}
	}
	if acc == nil || acc.MeanA != 0.5 || acc.MeanB != 1 {
		t.Fatalf("run metrics %+v", c.Metrics)
	}
	if md := c.Markdown(); !strings.Contains(md, "### Run-level metrics") || !strings.Contains(md, "| ece ↓ |") {
		t.Errorf("markdown:\n%s", md)
	}
	// The gate finds run-level metrics by name.
	res, _ := Gate(c, []GateRule{{Metric: MetricMacroF1, MaxDrop: 0.03}}, false)
	if res[0].Verdict == "missing" {
		t.Errorf("gate could not find macro_f1: %+v", res)
	}
}
