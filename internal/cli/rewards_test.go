package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/svbench/svbench/analysis/rewardsagree"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/llm/llmtest"
)

// TestRewardsAgree runs E1's features policy, then studies the run with a
// fake judge endpoint that says yes to everything: the judge's yes rate is
// 1, every unsolved row is a disagreement, and a second study sends nothing.
func TestRewardsAgree(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "Yes."}
	}})
	defer srv.Close()
	t.Setenv("SVBENCH_JUDGE_KEY", "k")
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:features", "-n", "12", "--out", out, "--progress", "none"); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	run := runDirs(t, out)[0]
	args := []string{"rewards", "agree", run, "--judge-model", "judge-1", "--base-url", srv.BaseURL(), "--api-key-env", "SVBENCH_JUDGE_KEY"}
	code, stdout, stderr := runCLI(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := readAgreeReport(t, run)
	if rep.Scored != 12 || rep.Sources[1].PassRate.Point != 1 || int64(rep.Cost.Calls) != srv.Requests() || rep.Cost.Calls == 0 {
		t.Fatalf("report: scored %d, judge yes rate %v, calls %d (server saw %d)", rep.Scored, rep.Sources[1].PassRate.Point, rep.Cost.Calls, srv.Requests())
	}
	if want := rep.Solved.JudgeOnly; rep.Disagreements != want || rep.Solved.VerifierOnly != 0 || rep.Solved.Neither != 0 {
		t.Errorf("confusion %+v", rep.Solved)
	}
	if body := srv.Bodies()[0]; body["model"] != "judge-1" || body["temperature"] != 0.0 {
		t.Errorf("judge request = %v", body)
	}
	if !strings.Contains(stdout, "# Reward sources: network-logs") {
		t.Errorf("stdout: %s", stdout)
	}
	// A judge that says yes to everything misses nothing (recall 1) and
	// pays for every unsolved row (its false positives, named).
	q := rep.Quality[0]
	if q.Source != "llm_judge" || q.FN != 0 || q.TN != 0 || q.FP != rep.Solved.JudgeOnly || q.TP != rep.Solved.BothPass || q.Recall.Value == nil || *q.Recall.Value != 1 {
		t.Errorf("reward quality %+v", q)
	}
	for _, want := range []string{"## Reward quality against the executable verdict", "| llm_judge | the judge said yes (judge component ≥ 1) | " + strconv.Itoa(q.TP) + " | " + strconv.Itoa(q.FP) + " | 0 | 0 | " + q.Precision.String() + " | " + q.Recall.String()} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, stdout)
		}
	}
	if q.FP > 0 && len(q.FalsePositives) == 0 {
		t.Errorf("false positives not named: %+v", q)
	}
	before := srv.Requests()
	if code, _, stderr := runCLI(t, args...); code != 0 || srv.Requests() != before {
		t.Fatalf("re-run: exit %d, %d new judge requests: %s", code, srv.Requests()-before, stderr)
	}
}

func TestRewardsAgreeBadInput(t *testing.T) {
	srv := llmtest.New(llmtest.Options{Schedule: func(int64) llmtest.Fault { return llmtest.BadRequest }, ErrorMessage: "model judge-x does not exist"})
	defer srv.Close()
	t.Setenv("SVBENCH_JUDGE_KEY", "k")
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:features", "-n", "3", "--out", out, "--progress", "none"); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	run := runDirs(t, out)[0]
	for _, c := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"no judge", []string{"rewards", "agree", run}, 2, "--judge-model is required"},
		{"missing run", []string{"rewards", "agree", filepath.Join(out, "nope"), "--judge-model", "j", "--base-url", srv.BaseURL()}, 2, "nope"},
		{"bad tolerance", []string{"rewards", "agree", run, "--judge-model", "j", "--tolerance", "2"}, 2, "--tolerance"},
		{"builtin judge", []string{"rewards", "agree", run, "--judge-model", "builtin:features"}, 2, "served model"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, c.args...)
			if code != c.code || !strings.Contains(stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want %d and %q", code, stderr, c.code, c.want)
			}
		})
	}
	// A judge endpoint that refuses every request: every row is a judge
	// failure, counted apart, and the report says there is nothing to compare.
	code, stdout, stderr := runCLI(t, "rewards", "agree", run, "--judge-model", "judge-x", "--base-url", srv.BaseURL(), "--api-key-env", "SVBENCH_JUDGE_KEY", "--max-retries", "-1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "3 rows where the judge gave no verdict") || !strings.Contains(stdout, "nothing to compare") {
		t.Errorf("judge failures not reported:\n%s", stdout)
	}
}

// TestRewardsAgreeE2 studies an E2 run (tool-autofix, which solves some
// rows) with a judge that says no to everything: every row the verifiers
// call solved is a disagreement, and a judge that answers neither yes nor
// no leaves rows without a verdict instead of counting as "no".
func TestRewardsAgreeE2(t *testing.T) {
	reply := "No."
	srv := llmtest.New(llmtest.Options{Respond: func(llmtest.ChatRequest) llmtest.Reply { return llmtest.Reply{Content: reply} }})
	defer srv.Close()
	t.Setenv("SVBENCH_JUDGE_KEY", "k")
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e2", "--model", "builtin:tool-autofix", "-n", "8", "--out", out, "--progress", "none"); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	run := runDirs(t, out)[0]
	code, stdout, stderr := runCLI(t, "rewards", "agree", run, "--judge-model", "judge-1", "--base-url", srv.BaseURL(), "--api-key-env", "SVBENCH_JUDGE_KEY")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep := readAgreeReport(t, run)
	if rep.Scored != 8 || rep.Sources[1].PassRate.Point != 0 || rep.Solved.JudgeOnly != 0 || rep.Solved.BothPass != 0 {
		t.Fatalf("report: scored %d, judge yes rate %v, confusion %+v", rep.Scored, rep.Sources[1].PassRate.Point, rep.Solved)
	}
	if rep.Solved.VerifierOnly == 0 || rep.Disagreements < rep.Solved.VerifierOnly {
		t.Errorf("tool-autofix solved no row, or its solved rows are not disagreements: %+v, %d disagreements", rep.Solved, rep.Disagreements)
	}
	if !strings.Contains(stdout, "# Reward sources: config-verification") {
		t.Errorf("stdout: %s", stdout)
	}

	reply = "It depends on the cluster."
	out2 := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e2", "--model", "builtin:tool-autofix", "-n", "3", "--out", out2, "--progress", "none"); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr)
	}
	code, stdout, stderr = runCLI(t, "rewards", "agree", runDirs(t, out2)[0], "--judge-model", "judge-1", "--base-url", srv.BaseURL(), "--api-key-env", "SVBENCH_JUDGE_KEY")
	if code != 0 {
		t.Fatalf("unclear judge: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "3 rows where the judge gave no verdict") {
		t.Errorf("an unclear judge reply was not reported as no verdict:\n%s", stdout)
	}
}

// readAgreeReport reads the report `rewards agree` wrote into run.
func readAgreeReport(t *testing.T, run string) rewardsagree.Report {
	t.Helper()
	var rep rewardsagree.Report
	b, err := os.ReadFile(filepath.Join(run, rewardsagree.ReportJSON))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestStudyTakesEnvAndRubric: runs whose manifest and rows do not name the
// environment (verl's rollout dumps) are studied with --env and --rubric;
// study used to answer "pass --env" and then refuse the flag.
func TestStudyTakesEnvAndRubric(t *testing.T) {
	e, err := env.Default.New("e1", env.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, err := e.Load(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, ex := range ds.Examples[:6] {
		var gold string
		_ = json.Unmarshal(ex.Answer, &gold)
		out := `{"label": "` + gold + `", "confidence": 0.7}`
		sc, err := e.Score(t.Context(), ex, env.OutsideRollout(env.CompletionText(out).Messages), "default")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(map[string]any{"input": ex.Prompt[len(ex.Prompt)-1].Content, "output": out, "gts": gold, "score": sc.Total, "step": 5})
		lines = append(lines, string(b))
	}
	root := t.TempDir()
	var dirs []string
	for _, name := range []string{"a", "b"} {
		d := filepath.Join(root, name)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	code, _, stderr := runCLI(t, "study", dirs[0], dirs[1], "--out", filepath.Join(root, "out"))
	if code == 0 || !strings.Contains(stderr, "pass --env") {
		t.Fatalf("without --env: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := runCLI(t, "study", dirs[0], dirs[1], "--env", "e1", "--rubric", "default", "--out", filepath.Join(root, "out"))
	if code != 0 || strings.Count(stdout, "executable ") < 2 || !strings.Contains(stdout, "(n=6)") {
		t.Fatalf("with --env e1 --rubric default: exit %d\n%s\n%s", code, stdout, stderr)
	}
}
