package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// The same evaluation must give the same summary at any concurrency: rows
// land in results.jsonl in finishing order, and the bootstrap once followed
// that order (two `make demo` runs printed different CIs).
func TestSummaryIndependentOfConcurrency(t *testing.T) {
	for _, envName := range []string{"e1", "e2", "e4"} {
		t.Run(envName, func(t *testing.T) {
			var summaries []map[string]any
			for _, c := range []string{"1", "16"} {
				out := t.TempDir()
				policy := map[string]string{"e1": "builtin:features", "e2": "builtin:tool-autofix", "e4": "builtin:indicators"}[envName]
				code, _, stderr := runCLI(t, "eval", "--env", envName, "--model", policy, "-n", "60", "-r", "2", "-c", c, "--out", out, "--progress", "none")
				if code != 0 {
					t.Fatalf("-c %s: exit %d: %s", c, code, stderr)
				}
				b, err := os.ReadFile(filepath.Join(runDirs(t, out)[0], artifact.SummaryFile))
				if err != nil {
					t.Fatal(err)
				}
				var m map[string]any
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatal(err)
				}
				delete(m, "run") // run id, start time
				if ref, ok := m["reference_summary"].(map[string]any); ok {
					delete(ref, "run_id") // the run's identity again, in the reference's envelope
					delete(ref, "timestamp")
				}
				summaries = append(summaries, withoutTimings(m).(map[string]any))
			}
			if !reflect.DeepEqual(summaries[0], summaries[1]) {
				a, _ := json.MarshalIndent(summaries[0], "", " ")
				b, _ := json.MarshalIndent(summaries[1], "", " ")
				t.Fatalf("summary at -c 1 differs from -c 16:\n%s\n---\n%s", a, b)
			}
		})
	}
}

// withoutTimings drops wall-clock measurements (tool call durations,
// latencies), the only part of a summary allowed to differ between runs.
func withoutTimings(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range t {
			if strings.HasSuffix(k, "_ms") || strings.Contains(k, "latency") || strings.Contains(k, "duration") || strings.HasSuffix(k, "time_ms") {
				continue
			}
			out[k] = withoutTimings(x)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = withoutTimings(x)
		}
		return out
	}
	return v
}
