package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svbench/svbench/internal/cli"
	"github.com/svbench/svbench/server"
)

// trainPython is Debian's interpreter, the one python3-torch installs into
// (scripts/deps.sh train).
const trainPython = "/usr/bin/python3"

// trainCLI runs one svbench command in-process and fails the test on a non-zero exit.
func trainCLI(t *testing.T, args ...string) string {
	t.Helper()
	var out, errb bytes.Buffer
	if rc := cli.Execute(t.Context(), args, &out, &errb); rc != 0 {
		t.Fatalf("svbench %s: exit %d\n%s\n%s", strings.Join(args, " "), rc, out.String(), errb.String())
	}
	return out.String()
}

// needTrainPython skips the test unless Debian's python3 imports modules
// (what scripts/deps.sh train installs).
func needTrainPython(t *testing.T, modules string) {
	t.Helper()
	if _, err := os.Stat(trainPython); err != nil {
		t.Skipf("%s not found: svtrain needs Debian's python3 with python3-torch (scripts/deps.sh train)", trainPython)
	}
	if out, err := exec.Command(trainPython, "-c", "import "+modules).CombinedOutput(); err != nil {
		t.Skipf("%s cannot import %s (%v: %s): scripts/deps.sh train", trainPython, modules, err, bytes.TrimSpace(out))
	}
}

// TestSvtrainContract runs train/tests: the policy contract the GRPO loop
// relies on (sampling's log-probabilities are the update's, checkpoints
// reload, advantages) and resumption (a run killed mid-step and resumed
// equals the uninterrupted run row for row). Its Hugging Face cases skip
// without transformers.
func TestSvtrainContract(t *testing.T) {
	needTrainPython(t, "torch")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, trainPython, "-B", "-m", "unittest", "discover", "-s", filepath.Join("..", "..", "train", "tests"), "-v")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("train/tests: %v\n%s", err, out)
	}
	for _, want := range []string{"test_sampled_logprobs_are_the_updates (test_policy.TinyPolicyTest", "test_killed_mid_step_resumes_to_the_same_run (test_resume.ResumeTest"} {
		if !bytes.Contains(out, []byte(want)) {
			t.Fatalf("%s did not run:\n%s", want, out)
		}
	}
	t.Logf("%s", bytes.TrimSpace(out))
}

// TestTrainSmoke runs svtrain (train/, Python and PyTorch) for two GRPO steps of two arms (executable
// reward and the learned reward model) with a tiny model against an
// in-process svbench server, then checks that the server scored the
// rollouts, the run files are written, and svbench report and study read
// them. It asserts nothing about learning.
func TestTrainSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the training smoke test runs PyTorch for about a minute")
	}
	needTrainPython(t, "torch")
	tmp := t.TempDir()
	data := filepath.Join(tmp, "data")
	trainCLI(t, "data", "build", "e1", "--n", "200", "--seed", "5", "--out", data)
	var all bytes.Buffer
	for _, s := range []string{"train", "dev", "test"} {
		b, err := os.ReadFile(filepath.Join(data, s+".jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		all.Write(b)
	}
	combined := filepath.Join(data, "e1-splits.jsonl")
	if err := os.WriteFile(combined, all.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	// The baseline's answers on the train split, exported for the warm start.
	trainCLI(t, "eval", "e1", "-m", "builtin:features", "--dataset", filepath.Join(data, "train.jsonl"), "--out", filepath.Join(tmp, "base"))
	runs, _ := filepath.Glob(filepath.Join(tmp, "base", "evals", "*", "*", "results.jsonl"))
	if len(runs) != 1 {
		t.Fatalf("baseline runs: %v", runs)
	}
	sft := filepath.Join(tmp, "sft.jsonl")
	trainCLI(t, "sft", "export", filepath.Dir(runs[0]), "--env", "e1", "--eval-set", filepath.Join(data, "test.jsonl"), "--drop-overlap", "--out", sft)

	srv, err := server.New(server.Config{Envs: []string{"e1"}, Datasets: map[string]string{"e1": combined},
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	// Every item names its example: only the server's example carries what
	// the rubric reads beside the answer (E1's meta.ambiguous, where an
	// abstention is paid); an item scored by its gold answer alone never
	// paid one, and every run learned that abstaining is worth 0.3.
	var scoreCalls, scored, byAnswer atomic.Int64
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/score" {
			scoreCalls.Add(1)
			body, _ := io.ReadAll(r.Body)
			var req struct {
				Items []struct {
					ExampleID string `json:"example_id"`
				} `json:"items"`
			}
			_ = json.Unmarshal(body, &req)
			scored.Add(int64(len(req.Items)))
			for _, it := range req.Items {
				if it.ExampleID == "" {
					byAnswer.Add(1)
				}
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	out := filepath.Join(tmp, "out")
	results := filepath.Join(tmp, "RESULTS.md")
	ctx, cancel := context.WithTimeout(t.Context(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, trainPython, "-B", filepath.Join("..", "..", "train", "run.py"), "matrix", "--server", ts.URL, "--data-dir", data, "--sft-data", sft,
		"--out", out, "--arms", "grpo,rm", "--size", "test", "--sft-steps", "3", "--sft-batch", "8", "--steps", "2",
		"--seeds", "1", "--prompts", "3", "--group", "3", "--max-new", "8", "--test-limit", "10", "--rm-prompts", "20", "--threads", "1",
		"--no-report", "--results", results)
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	py, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("svtrain failed: %v\n%s", err, py)
	}
	t.Logf("%s", py)

	// 2 arms × (2 steps + 2 evaluations), and the reward model's labels.
	if n := scoreCalls.Load(); n < 8 {
		t.Errorf("/v1/score called %d times, want at least 8", n)
	}
	if n := scored.Load(); n < 2*(2*3*3+2*10) {
		t.Errorf("%d items scored, want at least %d", n, 2*(2*3*3+2*10))
	}
	if n := byAnswer.Load(); n != 0 {
		t.Errorf("%d of %d items were scored by their gold answer, not their example id", n, scored.Load())
	}
	run := filepath.Join(out, "runs", "grpo-s1")
	for _, f := range []string{"results.jsonl", "metrics_raw.json", "run_manifest.json", "rollouts/results.jsonl", "rollouts/metrics_raw.json", "eval_before.jsonl", "eval_after.jsonl"} {
		if _, err := os.Stat(filepath.Join(run, f)); err != nil {
			t.Errorf("run file: %v", err)
		}
	}
	var m struct {
		Metrics []map[string]any `json:"metrics"`
	}
	b, err := os.ReadFile(filepath.Join(run, "metrics_raw.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	withReward, withEval := 0, 0
	for _, s := range m.Metrics {
		if _, ok := s["reward/e1/mean"]; ok {
			withReward++
		}
		if _, ok := s["eval/e1/avg@1"]; ok {
			withEval++
		}
		for _, k := range []string{"metrics/e1/reward_accuracy", "decode_len/e1/mean", "time/step"} {
			if _, ok := s[k]; !ok && s["reward/e1/mean"] != nil {
				t.Errorf("step %v has no %s", s["step"], k)
			}
		}
	}
	if withReward != 2 || withEval != 2 {
		t.Errorf("metrics_raw.json: %d steps with a reward (want 2), %d with an eval (want 2: first and last)", withReward, withEval)
	}

	// svbench reads the run: curves from metrics_raw.json, and per-step
	// curves from the rollout rows.
	rep := filepath.Join(tmp, "report")
	trainCLI(t, "report", run, "--rubric", "default", "--out", rep)
	var sum map[string]json.RawMessage
	b, err = os.ReadFile(filepath.Join(rep, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	var tr struct {
		Steps int `json:"steps"`
		Eval  *struct {
			BeforeStep int64 `json:"before_step"`
			AfterStep  int64 `json:"after_step"`
		} `json:"eval"`
	}
	if err := json.Unmarshal(sum["training"], &tr); err != nil || tr.Steps != 2 || tr.Eval == nil || tr.Eval.AfterStep != 2 {
		t.Errorf("report training summary: %s (err %v)", sum["training"], err)
	}
	var agree struct {
		Rows       int `json:"rows"`
		Reproduced int `json:"reproduced"`
	}
	if err := json.Unmarshal(sum["trainer_agreement"], &agree); err != nil || agree.Rows != 10 || agree.Reproduced != 10 {
		t.Errorf("svbench's re-score of the executable arm's final answers: %s (err %v); want all 10 reproduced", sum["trainer_agreement"], err)
	}
	rep2 := filepath.Join(tmp, "report-rollouts")
	trainCLI(t, "report", filepath.Join(run, "rollouts"), "--rubric", "default", "--out", rep2)
	b, err = os.ReadFile(filepath.Join(rep2, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b, []byte(`"learning_curve"`)) {
		t.Errorf("report of the rollout rows has no learning_curve")
	}
	st := filepath.Join(tmp, "study")
	trainCLI(t, "study", run, filepath.Join(out, "runs", "rm-s1"), "--rubric", "default", "--out", st)
	if _, err := os.Stat(filepath.Join(st, "study.json")); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(results); err != nil {
		t.Errorf("RESULTS.md not written: %v", err)
	}
	// A rerun over the same directory resumes (seed 1 has nothing left to
	// train) and the wall time counts both invocations, not the last one
	// alone. It adds seed 2 with --jobs 2: the seeds run in worker
	// processes (the GPU script's path), seed 1's files untouched.
	before, err := os.ReadFile(filepath.Join(run, "results.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{}, cmd.Args[1:]...)
	for i, a := range args {
		if a == "--seeds" {
			args[i+1] = "1,2"
		}
	}
	again := exec.CommandContext(ctx, cmd.Args[0], append(args, "--jobs", "2")...)
	again.Env = cmd.Env
	if py, err := again.CombinedOutput(); err != nil {
		t.Fatalf("svtrain rerun failed: %v\n%s", err, py)
	} else if !bytes.Contains(py, []byte("2 seeds in 2 worker processes")) {
		t.Errorf("the rerun did not run its seeds in worker processes:\n%s", py)
	}
	if after, err := os.ReadFile(filepath.Join(run, "results.jsonl")); err != nil || !bytes.Equal(before, after) {
		t.Errorf("seed 1's finished run changed on the rerun (err %v)", err)
	}
	for _, arm := range []string{"grpo-s2", "rm-s2"} {
		if _, err := os.Stat(filepath.Join(out, "runs", arm, "svtrain_summary.json")); err != nil {
			t.Errorf("seed 2 in a worker process: %v", err)
		}
	}
	var mx struct {
		Invocations int `json:"invocations"`
	}
	if b, err := os.ReadFile(filepath.Join(out, "matrix.json")); err != nil || json.Unmarshal(b, &mx) != nil || mx.Invocations != 2 {
		t.Errorf("matrix.json after a rerun: invocations %d (err %v), want 2", mx.Invocations, err)
	}
	if b, _ := os.ReadFile(results); !bytes.Contains(b, []byte("over 2 invocations (resumed)")) {
		t.Errorf("RESULTS.md's wall time does not say it spans both invocations")
	}
}

// TestTrainE2Smoke runs svtrain's E2 loop (train/svtrain/e2train.py) for
// two GRPO steps against an in-process server: every rollout is a
// /v1/sessions episode whose first turn calls scanners and whose second
// answers, the warm start reads builtin:tool-autofix's episodes, and
// e2-results reads the run. It asserts nothing about learning.
func TestTrainE2Smoke(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the E2 training smoke test runs PyTorch")
	}
	needTrainPython(t, "torch, yaml")
	tmp := t.TempDir()
	out := filepath.Join(tmp, "out")
	// The teacher's episodes, where the loop looks for them before running
	// svbench eval itself.
	trainCLI(t, "eval", "e2", "-m", "builtin:tool-autofix", "--split", "train", "-n", "40", "--out", filepath.Join(out, "teacher-train"))
	trainCLI(t, "eval", "e2", "-m", "builtin:tool-autofix", "--split", "dev", "-n", "6", "--out", filepath.Join(out, "teacher-dev"))

	srv, err := server.New(server.Config{Envs: []string{"e2"}, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	var created, steps, toolSteps atomic.Int64
	h := srv.Handler()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodPost && r.URL.Path == "/v1/sessions":
			created.Add(1)
		case r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/step"):
			steps.Add(1)
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"tool_calls"`)) {
				toolSteps.Add(1)
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	defer ts.Close()

	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	run := filepath.Join("..", "..", "train", "run.py")
	cmd := exec.CommandContext(ctx, trainPython, "-B", run, "e2", "--server", ts.URL, "--out", out, "--seeds", "1",
		"--train-limit", "24", "--eval-splits", "dev", "--eval-limit", "6", "--d-model", "32", "--layers", "1",
		"--sft-steps", "3", "--sft-batch", "8", "--steps", "2", "--prompts", "2", "--group", "3", "--threads", "1")
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	py, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("svtrain e2 failed: %v\n%s", err, py)
	}
	t.Logf("%s", py)
	// 2 steps × 2 prompts × 3 rollouts, and 6 rows before and after.
	if n, want := created.Load(), int64(2*2*3+2*6); n != want {
		t.Errorf("%d sessions created, want %d", n, want)
	}
	if n := steps.Load(); n < created.Load() {
		t.Errorf("%d session steps for %d sessions: every episode ends with an answer", n, created.Load())
	}
	var hist []map[string]any
	b, err := os.ReadFile(filepath.Join(out, "seed1", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("history line %q: %v", l, err)
		}
		hist = append(hist, m)
	}
	if len(hist) != 2 {
		t.Fatalf("history has %d steps, want 2", len(hist))
	}
	for _, k := range []string{"reward", "f1", "fix", "patch_applied", "tool_calls", "constant_groups"} {
		if _, ok := hist[1][k]; !ok {
			t.Errorf("history step has no %s: %v", k, hist[1])
		}
	}
	for _, f := range []string{"sft.pt", "final.pt", "eval_before_dev.jsonl", "eval_after_dev.jsonl", "run.json"} {
		if _, err := os.Stat(filepath.Join(out, "seed1", f)); err != nil {
			t.Errorf("run file: %v", err)
		}
	}
	results := filepath.Join(tmp, "RESULTS-e2.md")
	rc := exec.CommandContext(ctx, trainPython, "-B", run, "e2-results", out, "--results", results)
	rc.Env = cmd.Env
	if py, err := rc.CombinedOutput(); err != nil {
		t.Fatalf("e2-results: %v\n%s", err, py)
	}
	if b, _ := os.ReadFile(results); !bytes.Contains(b, []byte("## dev split")) || !bytes.Contains(b, []byte("Teacher `builtin:tool-autofix`")) {
		t.Errorf("RESULTS-e2.md lacks the dev table or the teacher:\n%s", b)
	}
	t.Logf("%d sessions, %d steps (%d with tool calls)", created.Load(), steps.Load(), toolSteps.Load())

	// --deadline (train/gpu.sh's bound): a seed whose deadline has passed
	// takes no GRPO step, still evaluates, and says so; so does RESULTS.
	late := exec.CommandContext(ctx, trainPython, append(append([]string{}, cmd.Args[1:]...), "--seeds", "2", "--deadline", "1")...)
	late.Env = cmd.Env
	if py, err := late.CombinedOutput(); err != nil {
		t.Fatalf("svtrain e2 --deadline: %v\n%s", err, py)
	}
	var rj struct {
		Done    int  `json:"grpo_steps_done"`
		Stopped bool `json:"stopped_by_deadline"`
	}
	if b, err := os.ReadFile(filepath.Join(out, "seed2", "run.json")); err != nil || json.Unmarshal(b, &rj) != nil || rj.Done != 0 || !rj.Stopped {
		t.Errorf("run.json after a passed deadline: %+v (err %v), want 0 steps, stopped", rj, err)
	}
	if _, err := os.Stat(filepath.Join(out, "seed2", "eval_after_dev.jsonl")); err != nil {
		t.Errorf("no evaluation after a deadline stop: %v", err)
	}
	rc2 := exec.CommandContext(ctx, trainPython, "-B", run, "e2-results", out, "--results", results)
	rc2.Env = cmd.Env
	if py, err := rc2.CombinedOutput(); err != nil {
		t.Fatalf("e2-results: %v\n%s", err, py)
	}
	if b, _ := os.ReadFile(results); !bytes.Contains(b, []byte("GRPO was stopped by `--deadline` after 0 of the 2 steps")) {
		t.Errorf("RESULTS-e2.md does not say seed 2 was stopped by its deadline:\n%s", b)
	}
}
