package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset"
)

// One oversized line once made `svbench score` exit 1 and write nothing,
// losing every valid row of the batch; a BOM made the first row invalid.
func TestScoreKeepsEveryRowAroundBadOnes(t *testing.T) {
	good := `{"answer": "Malicious", "completion": "{\"label\": \"Malicious\", \"confidence\": 0.9}"}`
	var in bytes.Buffer
	in.WriteString("\xef\xbb\xbf" + good + "\r\n")
	in.WriteString(good + "\n")
	in.WriteString(`{"answer": "` + strings.Repeat("x", dataset.MaxLine) + `"}` + "\n")
	in.WriteString(good + "\n")
	p := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(p, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "score", "--env", "e1", "--input", p)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows := readScored(t, stdout)
	if len(rows) != 4 {
		t.Fatalf("%d output rows, want 4:\n%s", len(rows), stdout)
	}
	for i, r := range rows {
		if i == 2 {
			if !strings.Contains(r.Error, "longer than") || r.Line != 3 {
				t.Fatalf("oversized row: %+v", r)
			}
			continue
		}
		if r.Error != "" || r.Components["accuracy"] != 1 {
			t.Fatalf("row %d: %+v", i+1, r)
		}
	}
}

// Completions scored offline (vLLM batch outputs) become a run that report
// and scoreboard read like an evaluation.
func TestScoreRunDirFeedsReportAndScoreboard(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "vllm-batch")
	in := filepath.Join("testdata", "trainer", "e1", "results.jsonl")
	code, _, stderr := runCLI(t, "score", "--env", "e1", "--input", in, "--model", "Qwen/Qwen3-4B", "--run-dir", dir, "-o", filepath.Join(root, "scores.jsonl"))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"results.jsonl", "metadata.json", "summary.json", "report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if code, _, stderr = runCLI(t, "report", "--input", dir); code != 0 {
		t.Fatalf("report: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "scoreboard", "--root", root, "--out", t.TempDir())
	if code != 0 || !strings.Contains(stdout, "1 run(s) ranked") {
		t.Fatalf("scoreboard: exit %d: %s %s", code, stdout, stderr)
	}
}
