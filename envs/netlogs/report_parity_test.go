package netlogs

import (
	"bufio"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/base/sharedtest"
	"github.com/svbench/svbench/report"
)

// TestReportParity reproduces every case of the reference's E1 metrics
// from its own result rows: once as reference-format rows read through the
// loader, once as svbench rows. The reference block must match to 1e-9;
// svbench's own block must match wherever it is defined (the parity cases
// include no positive call, where its precision is n/a).
func TestReportParity(t *testing.T) {
	path := filepath.Join(sharedtest.Dir(t), "parity", "e1_metrics.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20)
	cases := 0
	for line := 1; sc.Scan(); line++ {
		var c struct {
			Results []json.RawMessage `json:"results"`
			Metrics map[string]any    `json:"metrics"`
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		cases++

		// Reference rows, through the format detection of the loader.
		dir := t.TempDir()
		var data []byte
		for _, r := range c.Results {
			data = append(append(data, r...), '\n')
		}
		if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		rep, err := report.FromRun(dir, "e1", report.Options{BootstrapReps: -1})
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		compareBlock(t, line, "reference rows", referenceBlock(t, rep), c.Metrics, false)
		compareBlock(t, line, "reference rows, svbench block", rep.Summary["metrics"], c.Metrics, true)

		// The same rows as svbench writes them.
		var rows []artifact.Result
		for _, raw := range c.Results {
			var ref struct {
				Index          int             `json:"index"`
				PredictedLabel string          `json:"predicted_label"`
				Confidence     float64         `json:"confidence"`
				Answer         json.RawMessage `json:"answer"`
			}
			if err := json.Unmarshal(raw, &ref); err != nil {
				t.Fatal(err)
			}
			rows = append(rows, artifact.Result{Index: ref.Index, Answer: ref.Answer,
				Parsed: map[string]any{"predicted_label": ref.PredictedLabel, "confidence": ref.Confidence}})
		}
		rep, err = report.Build("network-logs", rows, nil, report.Options{BootstrapReps: -1})
		if err != nil {
			t.Fatalf("line %d: %v", line, err)
		}
		compareBlock(t, line, "svbench rows", referenceBlock(t, rep), c.Metrics, false)
		compareBlock(t, line, "svbench rows, svbench block", rep.Summary["metrics"], c.Metrics, true)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cases == 0 {
		t.Fatal("no parity cases read")
	}
}

func referenceBlock(t *testing.T, rep *report.Report) any {
	t.Helper()
	ref, ok := rep.Summary[report.ReferenceSummaryKey].(*report.ReferenceSummary)
	if !ok {
		t.Fatal("no reference summary")
	}
	return ref.Metrics
}

// compareBlock checks every key of want (the reference block) against got
// after a JSON round trip: same keys, floats within 1e-9, counts exact.
// With nullOK a null in got (svbench's "undefined") matches anything.
func compareBlock(t *testing.T, line int, what string, got any, want map[string]any, nullOK bool) {
	t.Helper()
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g map[string]any
	if err := json.Unmarshal(b, &g); err != nil {
		t.Fatal(err)
	}
	for section, wv := range want {
		ws := wv.(map[string]any)
		gs, ok := g[section].(map[string]any)
		if !ok {
			t.Errorf("line %d %s: section %q missing", line, what, section)
			continue
		}
		if !reflect.DeepEqual(slices.Sorted(maps.Keys(ws)), slices.Sorted(maps.Keys(gs))) {
			t.Errorf("line %d %s: %s keys %v, want %v", line, what, section, slices.Sorted(maps.Keys(gs)), slices.Sorted(maps.Keys(ws)))
		}
		for k, w := range ws {
			if gs[k] == nil && nullOK {
				continue
			}
			gf, _ := gs[k].(float64)
			wf := w.(float64)
			tol := 1e-9
			if section == "confusion_matrix" {
				tol = 0
			}
			if math.Abs(gf-wf) > tol {
				t.Errorf("line %d %s: %s.%s = %v, want %v", line, what, section, k, gf, wf)
			}
		}
	}
	if !reflect.DeepEqual(slices.Sorted(maps.Keys(want)), slices.Sorted(maps.Keys(g))) {
		t.Errorf("line %d %s: sections %v, want %v", line, what, slices.Sorted(maps.Keys(g)), slices.Sorted(maps.Keys(want)))
	}
}
