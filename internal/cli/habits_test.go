package cli

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/llm/llmtest"
)

// The habits an Inspect or vf-eval user brings: each works or answers with
// the command to type.
func TestHabitsFromInspectAndVfEval(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		code int
		want []string // in stderr
	}{
		{"task first", []string{"e1"}, ExitUsage, []string{`"e1" is an environment (network-logs)`, "svbench eval e1 -m MODEL"}},
		{"Inspect task args", []string{"eval", "--env", "e1", "-m", "builtin:features", "-T", "tool_budget=3"}, ExitUsage, []string{"svbench's -T is the sampling temperature", "--param tool_budget=3"}},
		{"Inspect's -T temperature=", []string{"eval", "--env", "e1", "-m", "builtin:features", "-T", "temperature=0.5"}, ExitUsage, []string{"type -T 0.5"}},
		{"Inspect's -T max_tokens=", []string{"eval", "--env", "e1", "-m", "builtin:features", "-T", "max_tokens=512"}, ExitUsage, []string{"type --max-tokens 512"}},
		{"-M api_key", []string{"eval", "--env", "e1", "-m", "builtin:features", "-M", "api_key=sk-x"}, ExitUsage, []string{"-k VAR"}},
		{"-M engine arg", []string{"eval", "--env", "e1", "-m", "builtin:features", "-M", "tensor_parallel_size=2"}, ExitUsage, []string{"vllm serve … --tensor-parallel-size"}},
		{"-M not key=value", []string{"eval", "--env", "e1", "-m", "builtin:features", "-M", "oops"}, ExitUsage, []string{"want key=value"}},
		{"unknown long flag", []string{"eval", "--env", "e1", "--limt", "3"}, ExitUsage, []string{"did you mean --limit?"}},
		{"negative -n", []string{"eval", "--env", "e1", "-m", "builtin:features", "-n", "-5"}, ExitUsage, []string{"-n/--num-examples -5"}},
		{"environment twice", []string{"eval", "e1", "--env", "e1", "-m", "builtin:features"}, ExitUsage, []string{"given twice"}},
		{"unknown environment lists short ids", []string{"eval", "e9", "-m", "builtin:features"}, ExitUsage, []string{"e1 network-logs", "e6 redteam-defense"}},
		{"bad header", []string{"eval", "--env", "e1", "-m", "gpt-x", "-b", "http://127.0.0.1:1/v1", "--header", "no colon"}, ExitUsage, []string{"want 'Name: value'"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d: %s", code, tc.code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}

func TestPositionalEnvironmentsAndAliases(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "e1", "e4", "-m", "builtin:heuristic,builtin:indicators", "--limit", "3", "--epochs", "2",
		"--max-connections", "2", "-s", "--progress", "none", "--no-report", "--out", out)
	// builtin:heuristic is E1's, builtin:indicators E4's: each environment
	// refuses the other's policy, after running its own.
	if code == 0 || !strings.Contains(stderr, "e1: environment network-logs has no built-in policy \"indicators\"") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "3 examples × 2 rollouts = 6 episodes") {
		t.Errorf("the count of episodes is not said before the run: %s", stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("runs %v", dirs)
	}
	m, err := artifact.ReadMetadata(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if m.NumExamples != 3 || m.Rollouts != 2 || m.Concurrency != 2 {
		t.Errorf("--limit/--epochs/--max-connections not read as -n/-r/-c: %d examples, %d rollouts, concurrency %d", m.NumExamples, m.Rollouts, m.Concurrency)
	}

	out2 := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "e1", "e4", "-m", "builtin:noop-not-here", "--limit", "2", "--progress", "none", "--out", out2); code == 0 || !strings.Contains(stderr, "e1:") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// A paid endpoint without --prices says how many calls it is about to make;
// an unset key variable is named; Inspect's provider/model form is sent
// without the prefix to the provider's own API, and a server that answers
// 404 for the prefixed name says why.
func TestEndpointHabits(t *testing.T) {
	var gotModel, gotHeader string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/v1/models" { // a server without the list
			w.WriteHeader(http.StatusNotFound)
			return
		}
		var body struct {
			Model string `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&body)
		gotModel, gotHeader = body.Model, r.Header.Get("X-Tenant")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"error":{"message":"model not found"}}`))
	}))
	defer srv.Close()
	t.Setenv("SVB_TEST_UNSET_KEY", "")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "eval", "--env", "e1", "-m", "openai/gpt-4o-mini", "-b", srv.URL+"/v1", "-k", "SVB_TEST_UNSET_KEY",
		"--header", "X-Tenant: lab-7", "-n", "1", "--max-retries", "-1", "--max-consecutive-errors", "1", "--progress", "none", "--out", out)
	if code == 0 {
		t.Fatalf("a 404 endpoint completed: %s", stderr)
	}
	if gotModel != "openai/gpt-4o-mini" || gotHeader != "lab-7" {
		t.Errorf("sent model %q header %q", gotModel, gotHeader)
	}
	for _, w := range []string{"$SVB_TEST_UNSET_KEY is not set", "keeps the provider prefix \"openai/\"", "\"gpt-4o-mini\""} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	if !strings.Contains(stdout, "no scored row: every model call failed") {
		t.Errorf("a run with no row is not marked in its summary:\n%s", stdout)
	}
}

func TestIsLocalURL(t *testing.T) {
	for u, want := range map[string]bool{
		"":                               false,
		"https://api.openai.com/v1":      false,
		"http://localhost:8000/v1":       true,
		"http://127.0.0.1:30000/v1":      true,
		"http://10.1.2.3/v1":             true,
		"http://[::1]:8000/v1":           true,
		"http://vllm.svc.cluster.local/": true,
		"https://openrouter.ai/api/v1":   false,
	} {
		if got := isLocalURL(u); got != want {
			t.Errorf("isLocalURL(%q) = %v", u, got)
		}
	}
}

func TestEvalSetRunsSkipsAndResumes(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "nightly.toml")
	if err := os.WriteFile(cfg, []byte(`
[[eval]]
env = "e1"
models = ["builtin:features", "builtin:heuristic"]
n = 4
r = 2

[[eval]]
env_id = "e4"
model = "builtin:indicators"
num_examples = 3
env_args = { reward_source = "executable" }
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	code, _, stderr := runCLI(t, "eval", "--config", cfg, "--out", out, "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	statuses := func() []evalSetStatus {
		var st []evalSetStatus
		b, _ := os.ReadFile(filepath.Join(out, "eval-sets", "nightly.json"))
		if err := json.Unmarshal(b, &st); err != nil {
			t.Fatalf("status file %s: %v", b, err)
		}
		return st
	}
	if st := statuses(); len(st) != 3 || st[0].Status != "completed" || st[1].Status != "completed" || st[2].Status != "completed" || st[2].Env != "phishing-detection" {
		t.Fatalf("first pass: %+v", st)
	}
	feat := filepath.Join(out, "evals", "network-logs--builtin-features", "nightly-01")
	m, err := artifact.ReadMetadata(feat)
	if err != nil || m.NumExamples != 4 || m.Rollouts != 2 {
		t.Fatalf("entry 1: %+v %v", m, err)
	}
	// Pretend the second run was killed: the set resumes it and skips the
	// others.
	heur := filepath.Join(out, "evals", "network-logs--builtin-heuristic", "nightly-01")
	hm, err := artifact.ReadMetadata(heur)
	if err != nil {
		t.Fatal(err)
	}
	hm.Status = "interrupted"
	mb, _ := json.MarshalIndent(hm, "", "  ")
	if err := os.WriteFile(filepath.Join(heur, "metadata.json"), mb, 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := runCLI(t, "eval", "--config", cfg, "--out", out, "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("rerun: exit %d: %s", code, stderr)
	}
	if strings.Count(stdout, "skipped: completed earlier") != 2 || !strings.Contains(stderr, "resuming "+heur) {
		t.Errorf("rerun did not skip 2 and resume 1:\n%s\n%s", stdout, stderr)
	}
	if st := statuses(); len(st) != 3 || st[1].Status != "completed" || !strings.HasPrefix(st[0].Status, "skipped") {
		t.Errorf("second pass: %+v", st)
	}

	bad := filepath.Join(dir, "bad.toml")
	_ = os.WriteFile(bad, []byte("[[eval]]\nenv = \"e1\"\nmodle = \"builtin:features\"\n"), 0o644)
	if code, _, stderr := runCLI(t, "eval", "--config", bad); code != ExitUsage || !strings.Contains(stderr, `unknown key "modle" (did you mean "model"?)`) || !strings.Contains(stderr, "entry 1") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestEvalSetChangedEntryIsANewRun: an entry edited after its run (n = 3
// to n = 5, a temperature dropped) is a different run. The set names each
// difference, keeps the old run as it was, starts a run of its own, and
// finds that run again on the next pass.
func TestEvalSetChangedEntryIsANewRun(t *testing.T) {
	for _, tc := range []struct {
		name, before, after string
		diff                string
		wantN               int
	}{
		{"n changed", "n = 3", "n = 5", "--num-examples 5, but the run used 3", 5},
		{"temperature dropped", "n = 3\ntemperature = 0.5", "n = 3", "--temperature (not sent), but the run used 0.5", 3},
		{"params dropped", "n = 3\nparams = { judge_weight = 0.5 }", "n = 3", "--param (none), but the run used judge_weight=0.5", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			cfg := filepath.Join(dir, "set.toml")
			write := func(body string) {
				if err := os.WriteFile(cfg, []byte("[[eval]]\nenv = \"e4\"\nmodel = \"builtin:indicators\"\n"+body+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			out := filepath.Join(dir, "out")
			run := func() (string, string) {
				t.Helper()
				code, stdout, stderr := runCLI(t, "eval", "--config", cfg, "--out", out, "--progress", "none", "--no-report")
				if code != 0 {
					t.Fatalf("exit %d: %s", code, stderr)
				}
				return stdout, stderr
			}
			write(tc.before)
			run()
			old := filepath.Join(out, "evals", "phishing-detection--builtin-indicators", "set-01")
			write(tc.after)
			stdout, stderr := run()
			if strings.Contains(stdout, "completed earlier") || !strings.Contains(stderr, tc.diff) || !strings.Contains(stderr, "starting run set-01-") {
				t.Fatalf("a changed entry reused its old run:\n%s\n%s", stdout, stderr)
			}
			if m, err := artifact.ReadMetadata(old); err != nil || m.Status != artifact.StatusCompleted {
				t.Fatalf("the old run was not kept as it was: %+v %v", m, err)
			}
			dirs, _ := filepath.Glob(filepath.Join(out, "evals", "*", "set-01-*"))
			if len(dirs) != 1 {
				t.Fatalf("new runs: %v", dirs)
			}
			if m, err := artifact.ReadMetadata(dirs[0]); err != nil || m.NumExamples != tc.wantN {
				t.Fatalf("new run: %+v %v", m, err)
			}
			if stdout, stderr = run(); !strings.Contains(stdout, "completed earlier") || !strings.Contains(stdout, dirs[0]) {
				t.Fatalf("third pass did not find the new run:\n%s\n%s", stdout, stderr)
			}
		})
	}
}

// TestEvalSetDefaultGivenIsTheSameRun: an entry that drops a parameter
// given at its default (or adds one) runs under the same configuration,
// so its completed run is found again, not repeated.
func TestEvalSetDefaultGivenIsTheSameRun(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "set.toml")
	out := filepath.Join(dir, "out")
	for i, body := range []string{"n = 3\nparams = { reward_source = \"executable\", judge_weight = 1 }", "n = 3"} {
		if err := os.WriteFile(cfg, []byte("[[eval]]\nenv = \"e4\"\nmodel = \"builtin:indicators\"\n"+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := runCLI(t, "eval", "--config", cfg, "--out", out, "--progress", "none", "--no-report")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if i == 1 && (!strings.Contains(stdout, "completed earlier") || strings.Contains(stderr, "differ")) {
			t.Fatalf("dropping parameters given at their defaults started another run:\n%s\n%s", stdout, stderr)
		}
	}
}

// TestInspectModelHabits: Inspect's -m vllm/MODEL, -M base_url=,
// --reasoning-effort, --log-dir and --max-samples each do what they do in
// Inspect.
func TestInspectModelHabits(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.7}`}
	}})
	defer srv.Close()
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	logDir := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "e1", "-m", "vllm/Qwen/Qwen3-8B", "-M", "base_url="+srv.BaseURL(), "--reasoning-effort", "high",
		"--limit", "2", "--max-samples", "1", "--log-dir", logDir, "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bodies := srv.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	for _, b := range bodies {
		if b["model"] != "Qwen/Qwen3-8B" || b["reasoning_effort"] != "high" {
			t.Fatalf("request model %v, reasoning_effort %v", b["model"], b["reasoning_effort"])
		}
	}
	if dirs := runDirs(t, logDir); len(dirs) != 1 {
		t.Fatalf("--log-dir: runs %v", dirs)
	}
	if code, _, stderr := runCLI(t, "eval", "e1", "-m", "m", "--reasoning-effort", "low", "-S", `{"reasoning_effort": "high"}`); code != ExitUsage || !strings.Contains(stderr, "pass one") {
		t.Errorf("conflicting reasoning effort: exit %d: %s", code, stderr)
	}
}

// TestEvalSetEntryReachesTheRunAsValues: an entry's sampling and
// parameters reach the run as the set decoded them (the request carries
// the entry's numbers, the set's -S is merged in, the recorded
// configuration keeps judge_weight a number), and an entry's sampling no
// server accepts stops the set before its first run.
func TestEvalSetEntryReachesTheRunAsValues(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.7}`}
	}})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "")
	dir := t.TempDir()
	cfg := filepath.Join(dir, "set.toml")
	out := filepath.Join(dir, "out")
	write := func(body string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("[[eval]]\nenv = \"e1\"\nmodel = \"m\"\nn = 2\n"+body+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("temperature = 0.3\ntop_p = 0.9\nmax_tokens = 64\nseed = 7\nparams = { judge_weight = 0.5 }")
	code, _, stderr := runCLI(t, "eval", "--config", cfg, "--out", out, "--base-url", srv.BaseURL(), "-S", `{"enable_thinking": false}`, "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	bodies := srv.Bodies()
	if len(bodies) != 2 {
		t.Fatalf("%d requests, want 2", len(bodies))
	}
	for _, b := range bodies {
		if b["temperature"] != 0.3 || b["top_p"] != 0.9 || b["seed"] != float64(7) || b["enable_thinking"] != false {
			t.Fatalf("request %v: want the entry's temperature, top_p and seed and the set's -S", b)
		}
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("runs %v", dirs)
	}
	meta, err := artifact.ReadMetadata(dirs[0])
	if err != nil {
		t.Fatal(err)
	}
	if string(meta.Config["judge_weight"]) != "0.5" || meta.Params["judge_weight"] != "0.5" {
		t.Fatalf("recorded config %s, params %v: want judge_weight 0.5", meta.Config["judge_weight"], meta.Params)
	}
	write("temperature = 3")
	if code, _, stderr := runCLI(t, "eval", "--config", cfg, "--out", filepath.Join(dir, "other"), "--base-url", srv.BaseURL(), "--progress", "none"); code != ExitUsage || !strings.Contains(stderr, "entry 1") || !strings.Contains(stderr, "temperature 3") {
		t.Fatalf("temperature 3: exit %d: %s", code, stderr)
	}
	if len(srv.Bodies()) != 2 {
		t.Fatal("the refused set called the model")
	}
}
