package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Mistakes are refused before the first request, with what to do; each of
// these once ran a whole evaluation and exited 0 with meaningless numbers.
func TestEvalValidatesBeforeSpending(t *testing.T) {
	e1Rows := filepath.Join(t.TempDir(), "e1.jsonl")
	if err := os.WriteFile(e1Rows, []byte(`{"question": "Device x observed tcp 1→2", "answer": "Malicious"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		code int
		want []string
	}{
		{"misspelt rubric", []string{"--env", "e1", "-m", "builtin:features", "--rubric", "refrence"}, 2, []string{`did you mean "reference"`}},
		{"misspelt param", []string{"--env", "e2", "-m", "builtin:tool-only", "--param", "tool_budgt=0"}, 2, []string{`did you mean "tool_budget"`, "max_turns"}},
		{"param out of range", []string{"--env", "e2", "-m", "builtin:tool-only", "--param", "max_turns=0"}, 2, []string{"max_turns", "[1, 1000]"}},
		{"enum param", []string{"--env", "e2", "-m", "builtin:tool-only", "--param", "reward_source=hybird"}, 2, []string{`did you mean "hybrid"`}},
		{"another environment's param", []string{"--env", "e4", "-m", "builtin:indicators", "-a", `{"tool_budget": 0}`}, 2, []string{`no parameter "tool_budget"`, "reward_source, judge_weight"}},
		{"temperature out of range", []string{"--env", "e1", "-m", "gpt-x", "-b", "http://127.0.0.1:9/v1", "-T", "1024"}, 2, []string{"0 to 2"}},
		{"top-p out of range", []string{"--env", "e1", "-m", "gpt-x", "-b", "http://127.0.0.1:9/v1", "--top-p", "1.5"}, 2, []string{"(0, 1]"}},
		{"another environment's dataset", []string{"--env", "e4", "-m", "builtin:indicators", "--dataset", e1Rows}, 1, []string{"network-logs", "--env network-logs"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			code, _, stderr := runCLI(t, append(append([]string{"eval"}, tc.args...), "--out", out, "--progress", "none")...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, stderr)
				}
			}
			if dirs := runDirs(t, out); len(dirs) != 0 {
				t.Fatalf("a run directory was created: %v", dirs)
			}
		})
	}
}
