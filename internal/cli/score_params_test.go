package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
)

// `score` takes --param and -a exactly as `eval` does: a refused parameter
// gets the same message and exit code from both, because both go through
// one flag declaration and the registry's check of the environment's
// declared parameters.
func TestScoreParamsRefusedLikeEval(t *testing.T) {
	in := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(in, []byte(`{"answer": "Malicious", "completion": "{}"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		env  string
		args []string
		want string
	}{
		{"e3", []string{"--param", "test_timout=60"}, `no parameter "test_timout" (did you mean "test_timeout"?)`},
		{"e3", []string{"--param", "test_timeout=1"}, `want an integer in [2, 600]`},
		{"e3", []string{"--param", "sandbox=docker"}, `param sandbox="docker": want one of auto`},
		{"e3", []string{"-a", `{"test_timeout": 9999}`}, `want an integer in [2, 600]`},
		{"e3", []string{"-a", `[1]`}, `-a/--env-args: want a JSON object`},
		{"e1", []string{"--param", "reward_source"}, `--param "reward_source": want key=value`},
		{"e1", []string{"--param", "reward_source=llm_judge"}, `reward_source=llm_judge needs a judge model`},
	} {
		scoreArgs := append([]string{"score", "--env", tc.env, "--input", in}, tc.args...)
		evalArgs := append([]string{"eval", "--env", tc.env, "--model", "builtin:none", "--out", t.TempDir()}, tc.args...)
		sCode, _, sErr := runCLI(t, scoreArgs...)
		eCode, _, eErr := runCLI(t, evalArgs...)
		if sCode == 0 || !strings.Contains(sErr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error containing %q", scoreArgs, sCode, sErr, tc.want)
		}
		if sCode != eCode || firstLine(sErr) != firstLine(eErr) {
			t.Errorf("%v: score and eval disagree:\n  score: exit %d %q\n  eval:  exit %d %q", tc.args, sCode, firstLine(sErr), eCode, firstLine(eErr))
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// Accepted parameters reach the environment and are recorded with the run
// --run-dir writes, so the scored run says how it was scored.
func TestScoreParamsReachRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	in := filepath.Join("testdata", "trainer", "e1", "results.jsonl")
	code, _, stderr := runCLI(t, "score", "--env", "e1", "--input", in, "--run-dir", dir, "-o", filepath.Join(t.TempDir(), "scores.jsonl"),
		"--param", "reward_source=executable", "-a", `{"judge_weight": 0.5}`)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := meta.Params; len(got) != 2 || got["reward_source"] != "executable" || got["judge_weight"] != "0.5" {
		t.Errorf("run params = %v, want reward_source=executable judge_weight=0.5", got)
	}
}
