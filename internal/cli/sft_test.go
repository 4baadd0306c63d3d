package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSFTExport(t *testing.T) {
	run := evalRun(t, "--env", "e2", "-m", "builtin:tool-autofix", "-n", "20", "-r", "2")
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	// The run played the embedded test split: exporting it for training is
	// refused by default, and allowed only with the check turned off.
	code, _, stderr := runCLI(t, "sft", "export", run, "--solved-only", "--out", out)
	if code == 0 || !strings.Contains(stderr, "occur in the evaluation set (embedded test split") || !strings.Contains(stderr, "--split train") {
		t.Fatalf("a run of the test split exported by default: exit %d: %s", code, stderr)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatal("a refused export wrote its file")
	}
	code, _, stderr = runCLI(t, "sft", "export", run, "--solved-only", "--drop-overlap", "--out", out)
	if code != 0 || !strings.Contains(stderr, "kept 0") {
		t.Fatalf("--drop-overlap against the embedded test split: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "sft", "export", run, "--eval-split", "none", "--eval-split", "test", "--out", out); code != ExitUsage || !strings.Contains(stderr, "--eval-split none") {
		t.Fatalf("none with a split: exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, "sft", "export", run, "--eval-split", "holdout", "--out", out); code != ExitUsage || !strings.Contains(stderr, "--eval-split") {
		t.Fatalf("unknown split: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "sft", "export", run, "--solved-only", "--best-of-k", "1", "--eval-split", "none", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	n, withTools := 0, 0
	prompts := map[string]bool{}
	for sc.Scan() {
		var row struct {
			Messages []struct {
				Role      string `json:"role"`
				ToolCalls []struct {
					Type     string `json:"type"`
					Function struct {
						Name string `json:"name"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"messages"`
			Provenance struct {
				Solved *bool  `json:"solved"`
				Env    string `json:"env"`
				Model  string `json:"model"`
				Prompt string `json:"prompt_sha256"`
			} `json:"provenance"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		n++
		if row.Provenance.Solved == nil || !*row.Provenance.Solved || row.Provenance.Env != "config-verification" || row.Provenance.Model != "builtin:tool-autofix" {
			t.Fatalf("provenance %+v", row.Provenance)
		}
		if prompts[row.Provenance.Prompt] {
			t.Fatal("best-of-1 exported a prompt twice")
		}
		prompts[row.Provenance.Prompt] = true
		for _, m := range row.Messages {
			for _, tc := range m.ToolCalls {
				if tc.Type == "function" && strings.HasPrefix(tc.Function.Name, "run_") {
					withTools++
				}
			}
		}
	}
	if n == 0 || withTools == 0 || !strings.Contains(stderr, "kept") {
		t.Fatalf("%d rows, %d tool calls; %s", n, withTools, stderr)
	}

	// The run's prompts come from the embedded mini set: exporting them
	// against that set as an evaluation set is refused, or drops them all.
	evalSet := filepath.Join("..", "..", "envs", "configaudit", "data", "mini.jsonl")
	code, _, stderr = runCLI(t, "sft", "export", run, "--solved-only", "--eval-split", "none", "--eval-set", evalSet, "--out", out)
	if code == 0 || !strings.Contains(stderr, "occur in the evaluation set") {
		t.Fatalf("overlap not refused: exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "sft", "export", run, "--solved-only", "--eval-split", "none", "--eval-set", evalSet, "--drop-overlap", "--out", out)
	if code != 0 || !strings.Contains(stderr, "kept 0") {
		t.Fatalf("--drop-overlap: exit %d: %s", code, stderr)
	}
	if code, _, _ := runCLI(t, "sft", "export", run); code != ExitUsage {
		t.Fatalf("missing --out: exit %d", code)
	}
}
