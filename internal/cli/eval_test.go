package cli

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/llm/llmtest"
)

func runDirs(t *testing.T, root string) []string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(root, "evals", "*", "*"))
	var out []string
	for _, d := range dirs {
		if st, err := os.Stat(d); err == nil && st.IsDir() {
			out = append(out, d)
		}
	}
	return out
}

func TestEvalAgainstOpenAICompatibleEndpoint(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Latency: time.Millisecond, Respond: func(req llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "```json\n{\"label\": \"Malicious\", \"confidence\": 0.9}\n```"}
	}, Schedule: func(n int64) llmtest.Fault {
		if n%7 == 3 {
			return llmtest.RateLimited
		}
		return llmtest.OK
	}})
	defer srv.Close()
	const key = "sk-cli-test-KEY-abcdefghijklmnop"
	t.Setenv("SVBENCH_TEST_KEY", key)
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "eval", "--env", "sv-env-network-logs", "--model", "m-a,m-b", "-n", "20", "-c", "4",
		"--base-url", srv.BaseURL(), "-k", "SVBENCH_TEST_KEY", "-T", "0", "-t", "64",
		"-S", `{"chat_template_kwargs": {"enable_thinking": false}}`, "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 2 {
		t.Fatalf("run dirs = %v", dirs)
	}
	for _, d := range dirs {
		for _, f := range []string{artifact.ResultsFile, artifact.MetadataFile, artifact.SummaryFile, artifact.ReportFile} {
			if _, err := os.Stat(filepath.Join(d, f)); err != nil {
				t.Errorf("%s: %v", f, err)
			}
		}
		meta, err := artifact.ReadMetadata(d)
		if err != nil {
			t.Fatal(err)
		}
		if meta.Status != artifact.StatusCompleted || meta.Completed != 20 || meta.Environment != "network-logs" || !strings.HasPrefix(meta.DatasetRev, "sha256:") {
			t.Fatalf("metadata %+v", meta)
		}
		var sampling map[string]any
		_ = json.Unmarshal(meta.Sampling, &sampling)
		if sampling["temperature"] != 0.0 {
			t.Errorf("sampling in metadata = %v", sampling)
		}
	}
	// Temperature 0 and the extra body really reached the endpoint.
	body := srv.Bodies()[0]
	if body["temperature"] != 0.0 || body["max_tokens"] != 64.0 || body["chat_template_kwargs"] == nil {
		t.Fatalf("request body = %v", body)
	}
	// The key was used but is in no artifact.
	assertNoSecret(t, out, key)
	if !strings.Contains(stdout, "mean reward") {
		t.Fatalf("no summary printed: %s", stdout)
	}
}

func assertNoSecret(t *testing.T, root, secret string) {
	t.Helper()
	filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), secret) {
			t.Errorf("secret found in %s", p)
		}
		return nil
	})
}

func TestEvalBuiltinAndResume(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:features", "-n", "30", "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dirs := runDirs(t, out)
	if len(dirs) != 1 {
		t.Fatalf("dirs %v", dirs)
	}
	// Drop the last rows and tear the final line, as a kill would; resume.
	results := filepath.Join(dirs[0], artifact.ResultsFile)
	b, _ := os.ReadFile(results)
	lines := strings.SplitAfter(strings.TrimSpace(string(b)), "\n")
	torn := strings.Join(lines[:20], "") + lines[20][:len(lines[20])/2]
	os.WriteFile(results, []byte(torn), 0o644)
	code, _, stderr = runCLI(t, "eval", "--env", "e1", "--model", "builtin:features", "--resume", dirs[0], "--progress", "none")
	if code != 0 {
		t.Fatalf("resume exit %d: %s", code, stderr)
	}
	rows, err := artifact.ReadResults(results)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[artifact.Key]bool{}
	for _, r := range rows {
		seen[r.Key()] = true
	}
	if len(rows) != 30 || len(seen) != 30 {
		t.Fatalf("after resume %d rows, %d unique", len(rows), len(seen))
	}
}

func TestEvalUsageErrors(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"eval", "--model", "x"}, 2, "--env is required"},
		{[]string{"eval", "--env", "e9", "--model", "x"}, 2, "unknown environment"},
		{[]string{"eval", "--env", "e1"}, 2, "--model is required"},
		{[]string{"eval", "--env", "e1", "--model", "builtin:nope"}, 2, "no built-in policy"},
		{[]string{"eval", "--env", "e1", "--model", "gpt-4.1"}, 2, "needs an endpoint"},
		{[]string{"eval", "--env", "e1", "--model", "builtin:features", "--shard", "3/2"}, 2, "--shard"},
		{[]string{"eval", "--env", "e1", "--model", "builtin:features", "-S", "{bad"}, 2, "sampling-args"},
		{[]string{"eval", "--env", "e1", "--model", "builtin:features", "--dataset", "/nonexistent.jsonl"}, 1, "nonexistent"},
	}
	for _, tc := range cases {
		code, _, stderr := runCLI(t, append(tc.args, "--out", t.TempDir())...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d stderr %q; want %d and %q", tc.args, code, stderr, tc.code, tc.want)
		}
	}
}

func TestScoreCommandKeepsOrderAndReportsBadRows(t *testing.T) {
	in := filepath.Join(t.TempDir(), "rows.jsonl")
	rows := []string{
		`{"completion": "{\"label\": \"Malicious\", \"confidence\": 0.9}", "answer": "Malicious"}`,
		`{"completion": [{"role": "assistant", "content": "{\"label\": \"Benign\", \"confidence\": 0.8}"}], "answer": 1, "question": "q"}`,
		`{"answer": "Benign"}`,
		`not json`,
		`{"completion": "x", "answer": "Perhaps"}`,
		`{"completion": "{\"label\": \"Benign\", \"confidence\": 0.7}", "answer": "Benign"}`,
	}
	os.WriteFile(in, []byte(strings.Join(rows, "\n")+"\n"), 0o644)
	code, stdout, stderr := runCLI(t, "score", "--env", "e1", "--rubric", "reference", "--input", in)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got []scoredRow
	sc := bufio.NewScanner(strings.NewReader(stdout))
	for sc.Scan() {
		var r scoredRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		got = append(got, r)
	}
	if len(got) != len(rows) {
		t.Fatalf("%d outputs for %d rows", len(got), len(rows))
	}
	wantErr := []string{"", "", `"completion" missing`, "not a JSON object", `"answer"`, ""}
	for i, r := range got {
		if r.Line != i+1 {
			t.Errorf("row %d has line %d", i, r.Line)
		}
		if wantErr[i] == "" && r.Error != "" || wantErr[i] != "" && !strings.Contains(r.Error, wantErr[i]) {
			t.Errorf("row %d error %q, want %q", i+1, r.Error, wantErr[i])
		}
	}
	// reference rubric: correct Malicious at 0.9 = 1 + 0.1 + 0.2*0.9 + 0.5.
	if d := got[0].Reward - 1.78; d > 1e-9 || d < -1e-9 {
		t.Errorf("reward %v", got[0].Reward)
	}
	if got[1].Components["accuracy"] != 0 { // answer 1 = Malicious, said Benign
		t.Errorf("row 2 components %v", got[1].Components)
	}
	if !strings.Contains(stderr, "scored 6 rows (3 invalid, 0 not re-verifiable)") {
		t.Errorf("stderr %q", stderr)
	}
}

func TestDemoWritesReportsAndScoreboard(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "demo", "--env", "e1", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if len(runDirs(t, out)) < 2 {
		t.Fatalf("runs: %v", runDirs(t, out))
	}
	for _, f := range []string{"scoreboard.md", "scoreboard.json"} {
		if _, err := os.Stat(filepath.Join(out, "evals", f)); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(stdout, "builtin:features") || !strings.Contains(stdout, "svbench view --root "+out) {
		t.Errorf("stdout: %s", stdout)
	}
	// Each run says where the demo stands before it starts.
	n := len(runDirs(t, out))
	if !strings.Contains(stderr, "[1/"+strconv.Itoa(n)+"] network-logs builtin:") || !strings.Contains(stderr, "["+strconv.Itoa(n)+"/"+strconv.Itoa(n)+"]") {
		t.Errorf("no [k/%d] progress lines on stderr:\n%s", n, stderr)
	}
}

func TestEvalWithJudgeModel(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: "yes"}
	}})
	defer srv.Close()
	t.Setenv("SVBENCH_JUDGE_KEY", "k")
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e2", "--model", "builtin:tool-autofix", "-n", "3",
		"--param", "reward_source=hybrid", "--judge-model", "judge-1", "--base-url", srv.BaseURL(),
		"--api-key-env", "SVBENCH_JUDGE_KEY", "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rows, err := artifact.ReadResults(filepath.Join(runDirs(t, out)[0], artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.Components["judge"] != 1 {
			t.Fatalf("judge component = %v (score error %q)", r.Components, r.ScoreError)
		}
	}
	if srv.Requests() < 3 {
		t.Fatalf("judge asked %d times", srv.Requests())
	}
	if body := srv.Bodies()[0]; body["model"] != "judge-1" || body["temperature"] != 0.0 {
		t.Fatalf("judge request = %v", body)
	}

	code, _, stderr = runCLI(t, "eval", "--env", "e2", "--model", "builtin:tool-autofix", "--param", "reward_source=llm_judge", "--out", t.TempDir())
	if code == 0 || !strings.Contains(stderr, "needs a judge model") {
		t.Fatalf("no judge: exit %d, stderr %q", code, stderr)
	}
}

// vf-eval's short flags: -m model, -b base URL, -k key variable, -T
// temperature, -t max tokens, -a env args. -t once meant temperature, so
// "-t 1024" sent temperature 1024.
func TestEvalSpeaksVfEvalFlags(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.6}`}
	}})
	defer srv.Close()
	t.Setenv("VF_KEY", "sk-vf")
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "m-vf", "-b", srv.BaseURL(), "-k", "VF_KEY", "-n", "3", "-r", "1", "-c", "2",
		"-T", "0.5", "-t", "1024", "-S", `{"top_k": 20}`, "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	body := srv.Bodies()[0]
	if body["temperature"] != 0.5 || body["max_tokens"] != 1024.0 || body["top_k"] != 20.0 || body["model"] != "m-vf" {
		t.Fatalf("request body = %v", body)
	}

	out = t.TempDir()
	code, _, stderr = runCLI(t, "eval", "--env", "e2", "-m", "builtin:tool-only", "-a", `{"tool_budget": 0}`, "-n", "2", "--out", out, "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("-a: exit %d: %s", code, stderr)
	}
	meta, err := artifact.ReadMetadata(runDirs(t, out)[0])
	if err != nil {
		t.Fatal(err)
	}
	if meta.Params["tool_budget"] != "0" {
		t.Fatalf("params from -a = %v", meta.Params)
	}
}

// Metadata records what was sent: a reasoning model gets no temperature,
// so the run must not claim temperature 0.
func TestMetadataRecordsSamplingSent(t *testing.T) {
	srv := llmtest.New(llmtest.Options{KeepLog: true, Respond: func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.6}`}
	}})
	defer srv.Close()
	t.Setenv("VF_KEY", "sk-vf")
	out := t.TempDir()
	if code, _, stderr := runCLI(t, "eval", "--env", "e1", "-m", "gpt-5-mini", "-b", srv.BaseURL(), "-k", "VF_KEY", "-n", "2", "-T", "0", "-t", "256", "--out", out, "--progress", "none"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if body := srv.Bodies()[0]; body["temperature"] != nil || body["max_completion_tokens"] != 256.0 {
		t.Fatalf("request body %v", body)
	}
	meta, err := artifact.ReadMetadata(runDirs(t, out)[0])
	if err != nil {
		t.Fatal(err)
	}
	var sent map[string]any
	if err := json.Unmarshal(meta.SamplingSent, &sent); err != nil {
		t.Fatal(err)
	}
	if _, ok := sent["temperature"]; ok || sent["max_completion_tokens"] != 256.0 {
		t.Fatalf("sampling_sent %v", sent)
	}
}

// TestContextLengthRowIsUnanswered: a server that refuses one row's
// request for being over the model's context window (prompt + max_tokens)
// does not stop the run: the row is recorded as unanswered with what to
// change, scored as no answer (so it counts in every metric), reported
// with the run's coverage, and not retried on resume.
func TestContextLengthRowIsUnanswered(t *testing.T) {
	const refused = "This model's maximum context length is 4096 tokens. However, you requested 5120 tokens (3072 in the messages, 2048 in the completion). Please reduce the length of the messages or completion."
	srv := llmtest.New(llmtest.Options{KeepLog: true, ErrorMessage: refused,
		Respond: func(llmtest.ChatRequest) llmtest.Reply {
			return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.7}`}
		},
		// -c 1: the second request is the second row's.
		Schedule: func(n int64) llmtest.Fault {
			if n == 1 {
				return llmtest.BadRequest
			}
			return llmtest.OK
		}})
	defer srv.Close()
	t.Setenv("OPENAI_API_KEY", "sk-ctx")
	out := t.TempDir()
	code, stdout, stderr := runCLI(t, "eval", "--env", "e1", "-m", "m-short", "-b", srv.BaseURL(), "-n", "5", "-c", "1",
		"--max-consecutive-errors", "1", "--run-id", "ctx", "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("one row over the context stopped the run: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "evals", "network-logs--m-short", "ctx")
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Status != artifact.StatusCompleted || meta.Completed != 5 || meta.Errors != 0 || meta.Unanswered != 1 {
		t.Fatalf("status %s, completed %d, errors %d, unanswered %d; want completed, 5, 0, 1", meta.Status, meta.Completed, meta.Errors, meta.Unanswered)
	}
	rows, err := artifact.ReadResults(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var unanswered []artifact.Result
	for _, r := range rows {
		if r.Unanswered != "" {
			unanswered = append(unanswered, r)
		}
	}
	if len(rows) != 5 || len(unanswered) != 1 {
		t.Fatalf("%d rows, %d unanswered; want 5, 1", len(rows), len(unanswered))
	}
	u := unanswered[0]
	if !strings.Contains(u.Unanswered, "prompt + max_tokens exceeds the model's context window") || !strings.Contains(u.Unanswered, "maximum context length is 4096") ||
		u.Error != "" || u.StopReason != "context_length" || u.Reward != 0 || u.Solved == nil || *u.Solved {
		t.Fatalf("unanswered row: %+v", u)
	}
	if !strings.Contains(stdout, "answered 4 of 5 attempted rows (80.0%); 1 unanswered") {
		t.Errorf("the summary does not state the coverage:\n%s", stdout)
	}
	md, err := os.ReadFile(filepath.Join(dir, artifact.ReportFile))
	if err != nil || !strings.Contains(string(md), "## Coverage") || !strings.Contains(string(md), "answered 4 of 5 attempted rows (80.0%)") {
		t.Errorf("report.md does not state the coverage (%v):\n%s", err, md)
	}
	var sum struct {
		Coverage struct {
			Attempted  int `json:"attempted_rows"`
			Unanswered int `json:"unanswered_rows"`
			Answered   int `json:"answered_rows"`
		} `json:"coverage"`
	}
	if b, err := os.ReadFile(filepath.Join(dir, artifact.SummaryFile)); err != nil || json.Unmarshal(b, &sum) != nil ||
		sum.Coverage.Attempted != 5 || sum.Coverage.Unanswered != 1 || sum.Coverage.Answered != 4 {
		t.Errorf("summary.json coverage %v (%v)", sum.Coverage, err)
	}
	// --no-report: the run summary states it from metadata.json.
	srv.Update(func(o *llmtest.Options) { o.Schedule = func(int64) llmtest.Fault { return llmtest.BadRequest } })
	code, stdout, stderr = runCLI(t, "eval", "--env", "e1", "-m", "m-short", "-b", srv.BaseURL(), "-n", "2", "-c", "1",
		"--run-id", "ctx-norep", "--out", out, "--progress", "none", "--no-report")
	if code != 0 || !strings.Contains(stdout, "coverage    answered 0 of 2 scored rows (0.0%); 2 unanswered") {
		t.Errorf("--no-report: exit %d, coverage not stated:\n%s%s", code, stdout, stderr)
	}

	// Resuming does not ask again: the row is finished.
	tearResults(t, dir, 4)
	before := srv.Requests()
	if code, _, stderr = runCLI(t, "eval", "--resume", dir, "--progress", "none"); code != 0 {
		t.Fatalf("resume: exit %d: %s", code, stderr)
	}
	if n := srv.Requests() - before; n != 1 {
		t.Fatalf("resume sent %d requests, want 1 (the torn row only)", n)
	}
}

// Every concurrency flag is bounded like -r: an absurd value is a usage
// error naming the flag and the bound, not a goroutine per job or a
// semaphore sized past memory (-c 9223372036854775807 ran out of memory).
func TestAbsurdConcurrencyRefused(t *testing.T) {
	t.Setenv("SVBENCH_TEST_KEY", "k")
	const huge = "9223372036854775807"
	out := t.TempDir()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"eval -c", []string{"eval", "--env", "e1", "--model", "builtin:heuristic", "-n", "1", "-c", huge, "--out", out, "--progress", "none"}, "-c/--concurrency " + huge + ": at most 4096"},
		{"eval --concurrency negative", []string{"eval", "--env", "e1", "--model", "builtin:heuristic", "-n", "1", "--concurrency", "-3", "--out", out, "--progress", "none"}, "-c/--concurrency -3: cannot be negative"},
		{"eval --max-in-flight", []string{"eval", "--env", "e1", "--model", "m1", "-n", "1", "--base-url", "http://127.0.0.1:9/v1", "--api-key-env", "SVBENCH_TEST_KEY", "--max-in-flight", huge, "--out", out, "--progress", "none"}, "--max-in-flight " + huge + ": at most 4096"},
		{"demo -c", []string{"demo", "-c", huge, "--out", out}, "-c/--concurrency " + huge + ": at most 4096"},
		{"probe -c", []string{"probe", "--env", "e1", "-c", huge, "--out", out}, "-c/--concurrency " + huge + ": at most 4096"},
		{"score -c", []string{"score", "--env", "e1", "--input", "-", "-c", huge}, "-c/--concurrency " + huge + ": at most 4096"},
		{"rewards agree --concurrency", []string{"rewards", "agree", out, "--judge-model", "j", "--concurrency", huge}, "--concurrency " + huge + ": at most 4096"},
		{"serve --workers", []string{"serve", "--workers", huge}, "--workers " + huge + ": at most 4096"},
		{"serve --env-workers", []string{"serve", "--env-workers", "e3=" + huge}, "1 ≤ N ≤ 4096"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, tc.args...)
			if code != ExitUsage || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr, ExitUsage, tc.want)
			}
		})
	}
	// The bound itself is accepted.
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:heuristic", "-n", "2", "-c", "4096", "--out", t.TempDir(), "--progress", "none", "--no-report")
	if code != 0 {
		t.Fatalf("-c 4096: exit %d, %s", code, stderr)
	}
}
