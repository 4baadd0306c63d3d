package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

func runCLI(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

// writeE1Run writes a run directory of svbench E1 rows; bad adds an API
// error row at line 3.
func writeE1Run(t *testing.T, bad bool) string {
	t.Helper()
	dir := t.TempDir()
	var buf bytes.Buffer
	for i := range 12 {
		r := artifact.Result{Index: i, Answer: json.RawMessage(`"Malicious"`), FinalText: "{}",
			Parsed: map[string]any{"predicted_label": []string{"Malicious", "Benign", "Abstain"}[i%3], "confidence": 0.7},
			Meta:   map[string]any{"scenario": "s1"}}
		if bad && i == 2 {
			r.Error, r.Parsed = "connection reset", nil
		}
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(append(b, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, artifact.ResultsFile), buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestReportCommand(t *testing.T) {
	dir := writeE1Run(t, false)
	code, out, errs := runCLI(t, "report", "--env", "e1", "--input", dir)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	// 4 of 12 rows right, 8 decided: accuracy 0.3333, accuracy_decided 0.5000.
	if !strings.Contains(out, "accuracy_decided") || !strings.Contains(out, "0.5000") || !strings.Contains(out, "0.3333") {
		t.Errorf("headline:\n%s", out)
	}
	for _, f := range []string{"summary.json", "report.md", "reliability.svg"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	var s map[string]any
	b, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(b, &s); err != nil || s["env"] != "network-logs" {
		t.Errorf("summary.json env %v (%v)", s["env"], err)
	}

	out2 := filepath.Join(t.TempDir(), "rep")
	if code, _, errs := runCLI(t, "report", "--env", "sv-env-network-logs", "--input", filepath.Join(dir, "results.jsonl"), "--out", out2); code != ExitOK {
		t.Fatalf("--out: exit %d: %s", code, errs)
	}
	if _, err := os.Stat(filepath.Join(out2, "report.md")); err != nil {
		t.Error(err)
	}
}

func TestReportCommandStrictAndUsage(t *testing.T) {
	dir := writeE1Run(t, true)
	code, _, errs := runCLI(t, "report", "--env", "network-logs", "--input", dir, "--strict")
	if code != ExitError || !strings.Contains(errs, "line 3 (index 2, rollout 0): error: connection reset") {
		t.Errorf("strict: exit %d, stderr %q", code, errs)
	}
	if _, err := os.Stat(filepath.Join(dir, "summary.json")); err == nil {
		t.Error("strict failure still wrote a summary")
	}
	if code, _, _ := runCLI(t, "report", "--env", "network-logs", "--input", dir); code != ExitOK {
		t.Errorf("non-strict with an error row: exit %d", code)
	}
	for _, args := range [][]string{
		{"report", "--input", dir}, // no metadata, no --env
		{"report", "--env", "e1"},  // no input
		{"report", "--env", "nope", "--input", dir},
		{"report", "--env", "e1", "--input", filepath.Join(dir, "missing.jsonl")},
	} {
		if code, _, _ := runCLI(t, args...); code != ExitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, ExitUsage)
		}
	}
}

func TestScoreboardCommand(t *testing.T) {
	root := t.TempDir()
	for i, model := range []string{"m-a", "m-b"} {
		run := writeE1Run(t, false)
		dst := filepath.Join(root, "network-logs--"+model, "run1")
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(run, dst); err != nil {
			t.Fatal(err)
		}
		meta := artifact.Metadata{RunID: "run1", Environment: "network-logs", Model: model, Seed: uint64(i + 1), Status: artifact.StatusCompleted}
		if err := artifact.WriteJSONAtomic(filepath.Join(dst, artifact.MetadataFile), meta); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(t.TempDir(), "sb")
	code, stdout, errs := runCLI(t, "scoreboard", "--root", root, "--out", out, "--env", "e1")
	if code != ExitOK || !strings.Contains(stdout, "2 run(s) ranked") {
		t.Fatalf("exit %d: %s %s", code, stdout, errs)
	}
	var sb struct {
		Runs []struct {
			Model   string             `json:"model"`
			Metrics map[string]float64 `json:"metrics"`
		} `json:"runs"`
	}
	b, err := os.ReadFile(filepath.Join(out, "scoreboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sb); err != nil || len(sb.Runs) != 2 || sb.Runs[0].Metrics["accuracy_decided"] != 0.5 || sb.Runs[0].Metrics["accuracy"] != 4.0/12 {
		t.Errorf("scoreboard.json %s (%v)", b, err)
	}
	if code, _, _ := runCLI(t, "scoreboard", "--root", filepath.Join(root, "nope")); code != ExitUsage {
		t.Errorf("missing root: exit %d", code)
	}
}
