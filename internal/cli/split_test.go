package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// TestEvalSplit: --split train evaluates the train split and says so in
// metadata, the manifest and the report; the default is test; a split
// with a dataset file, or an unknown split, is a usage error.
func TestEvalSplit(t *testing.T) {
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "builtin:heuristic", "-n", "6", "--split", "train", "--out", out, "--progress", "none"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "builtin:features", "-n", "6", "--out", out, "--progress", "none"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	seen := map[string]bool{}
	for _, d := range runDirs(t, out) {
		meta, err := artifact.ReadMetadata(d)
		if err != nil {
			t.Fatal(err)
		}
		rep, _ := os.ReadFile(filepath.Join(d, artifact.ReportFile))
		man, _ := os.ReadFile(filepath.Join(d, "manifest.json"))
		notEval := strings.Contains(string(rep), "Not an evaluation")
		switch meta.Model {
		case "builtin:heuristic":
			if meta.Split != "train" || meta.Dataset != "embedded:e1-train" || meta.Launch.Split != "train" || !notEval {
				t.Errorf("train run: split %q dataset %q launch %q, report warns: %v", meta.Split, meta.Dataset, meta.Launch.Split, notEval)
			}
			if len(man) > 0 && !strings.Contains(string(man), `"split": "train"`) {
				t.Errorf("manifest of a train run: %s", man)
			}
		case "builtin:features":
			if meta.Split != "test" || notEval {
				t.Errorf("default run: split %q, report warns: %v", meta.Split, notEval)
			}
		}
		seen[meta.Model] = true
	}
	if len(seen) != 2 {
		t.Fatalf("runs: %v", seen)
	}
	for _, args := range [][]string{
		{"--split", "train", "--dataset", "flows.jsonl"},
		{"--split", "holdout"},
	} {
		code, _, stderr := runCLI(t, append([]string{"eval", "--env", "e1", "-m", "builtin:heuristic", "--out", out, "--progress", "none"}, args...)...)
		if code != 2 || !strings.Contains(stderr, "split") {
			t.Errorf("%v: exit %d, %s", args, code, stderr)
		}
	}
}
