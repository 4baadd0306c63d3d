package cli

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/llm/llmtest"
)

// tearResults keeps the first keep rows and half of the next, as a kill
// mid-write leaves them.
func tearResults(t *testing.T, dir string, keep int) {
	t.Helper()
	results := filepath.Join(dir, artifact.ResultsFile)
	b, err := os.ReadFile(results)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(strings.TrimSpace(string(b)), "\n")
	torn := strings.Join(lines[:keep], "") + lines[keep][:len(lines[keep])/2]
	if err := os.WriteFile(results, []byte(torn), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestResumeTakesEverythingFromMetadata(t *testing.T) {
	var systems []string
	srv := llmtest.New(llmtest.Options{KeepLog: true, Latency: time.Millisecond, Respond: func(req llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.7}`}
	}})
	defer srv.Close()
	t.Setenv("SVBENCH_RESUME_KEY", "sk-resume-test")
	t.Setenv("OPENAI_BASE_URL", "")
	out := t.TempDir()
	sp := filepath.Join(t.TempDir(), "system.txt")
	if err := os.WriteFile(sp, []byte("You are a terse SOC analyst. Answer in JSON."), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "m-resume", "-n", "12", "-r", "2", "--seed", "7",
		"--base-url", srv.BaseURL(), "--api-key-env", "SVBENCH_RESUME_KEY", "-T", "0.3", "--max-tokens", "77",
		"--rubric", "reference", "--run-id", "my-run.1", "--system-prompt-file", sp, "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "evals", "network-logs--m-resume", "my-run.1")
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatalf("--run-id did not name the directory: %v", err)
	}
	if meta.Launch.APIKeyEnv != "SVBENCH_RESUME_KEY" || meta.Launch.SystemPromptSHA256 == "" || meta.SolvedWhen == "" {
		t.Fatalf("launch not recorded: %+v solved_when %q", meta.Launch, meta.SolvedWhen)
	}
	for _, b := range srv.Bodies() {
		msgs, _ := b["messages"].([]any)
		first, _ := msgs[0].(map[string]any)
		systems = append(systems, first["content"].(string))
	}
	for _, s := range systems {
		if s != "You are a terse SOC analyst. Answer in JSON." {
			t.Fatalf("system prompt sent = %q", s)
		}
	}
	before := len(srv.Bodies())

	tearResults(t, dir, 15)
	// The same run id again is refused: two runs must not share a directory.
	code, _, stderr = runCLI(t, "eval", "--env", "e1", "--model", "m-resume", "--run-id", "my-run.1",
		"--base-url", srv.BaseURL(), "--out", out, "--progress", "none")
	if code == 0 || !strings.Contains(stderr, "already exists") || !strings.Contains(stderr, "--resume") {
		t.Fatalf("reused run id: exit %d: %s", code, stderr)
	}

	// Flags that change the numbers are refused, each difference named.
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "-n", "5", "-r", "3", "-T", "0.9", "--rubric", "default", "--progress", "none")
	if code != 2 {
		t.Fatalf("conflicting resume: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"--num-examples 5, but the run used 12", "--rollouts 3, but the run used 2", "--temperature 0.9, but the run used 0.3", "--rubric default, but the run used reference"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("refusal does not say %q:\n%s", want, stderr)
		}
	}

	// One argument finishes the run: model, endpoint, key variable, rubric,
	// sampling, n, r, seed and the system prompt all come from metadata.
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "-c", "3", "--progress", "none")
	if code != 0 {
		t.Fatalf("resume exit %d: %s", code, stderr)
	}
	rows, err := artifact.ReadResults(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[artifact.Key]bool{}
	for _, r := range rows {
		seen[r.Key()] = true
		if r.Rubric != "reference" {
			t.Fatalf("resumed row rubric %q", r.Rubric)
		}
	}
	if len(rows) != 24 || len(seen) != 24 {
		t.Fatalf("after resume %d rows, %d unique; want 24", len(rows), len(seen))
	}
	bodies := srv.Bodies()
	if len(bodies)-before != 24-15 {
		t.Fatalf("resume sent %d requests, want %d", len(bodies)-before, 24-15)
	}
	last := bodies[len(bodies)-1]
	if last["temperature"] != 0.3 || last["max_tokens"] != 77.0 || last["model"] != "m-resume" {
		t.Fatalf("resumed request body = %v", last)
	}
	// Results and reports keep ordinary permissions after the rewrite.
	for _, f := range []string{artifact.ResultsFile, artifact.MetadataFile, artifact.SummaryFile, artifact.ReportFile} {
		st, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm()&0o044 != 0o044 {
			t.Errorf("%s has mode %v after resume; want group/other readable like a normal file", f, st.Mode().Perm())
		}
	}

	// A changed system prompt file is refused.
	tearResults(t, dir, 20)
	if err := os.WriteFile(sp, []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "--progress", "none")
	if code != 2 || !strings.Contains(stderr, "changed since the run started") {
		t.Fatalf("changed system prompt: exit %d: %s", code, stderr)
	}
}

func TestRunIDValidated(t *testing.T) {
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:features", "--run-id", "../escape", "--out", t.TempDir(), "--progress", "none")
	if code == 0 || !strings.Contains(stderr, "--run-id") {
		t.Fatalf("exit %d: %s", code, stderr)
	}
}

// TestResumeOnMovedEndpoint: a vLLM server restarted on another port must
// not strand a run. The endpoint (a new -b, or a corrected
// $OPENAI_BASE_URL) may change on resume; each session's endpoint is
// recorded and rows say which served them; the model may not change.
func TestResumeOnMovedEndpoint(t *testing.T) {
	answer := func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.7}`}
	}
	first := llmtest.New(llmtest.Options{KeepLog: true, Respond: answer})
	t.Setenv("OPENAI_API_KEY", "sk-moved")
	t.Setenv("OPENAI_BASE_URL", first.BaseURL())
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "m-moved", "-n", "8", "--seed", "3",
		"--run-id", "moved", "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first.Close() // the server goes away...
	dir := filepath.Join(out, "evals", "network-logs--m-moved", "moved")
	tearResults(t, dir, 3)

	second := llmtest.New(llmtest.Options{KeepLog: true, Respond: answer})
	defer second.Close()
	t.Setenv("OPENAI_BASE_URL", second.BaseURL()) // ...and comes back elsewhere
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "--progress", "none")
	if code != 0 {
		t.Fatalf("resume on the corrected $OPENAI_BASE_URL: exit %d: %s", code, stderr)
	}
	if n := len(second.Bodies()); n != 5 {
		t.Fatalf("the new server got %d requests, want the 5 missing rows", n)
	}

	// Explicitly with -b: a third server.
	third := llmtest.New(llmtest.Options{KeepLog: true, Respond: answer})
	defer third.Close()
	tearResults(t, dir, 6)
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "-b", third.BaseURL(), "--progress", "none")
	if code != 0 {
		t.Fatalf("resume with -b: exit %d: %s", code, stderr)
	}
	if n := len(third.Bodies()); n != 2 {
		t.Fatalf("-b server got %d requests, want 2", n)
	}
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(meta.Segments) != 3 || meta.Segments[0].BaseURL != first.BaseURL() || meta.Segments[1].BaseURL != second.BaseURL() ||
		meta.Segments[2].BaseURL != third.BaseURL() || meta.BaseURL != third.BaseURL() {
		t.Fatalf("segments %+v, base_url %s", meta.Segments, meta.BaseURL)
	}
	rows, err := artifact.ReadResults(filepath.Join(dir, artifact.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	per := map[int]int{}
	for _, r := range rows {
		per[r.Segment]++
	}
	if len(rows) != 8 || per[0] != 3 || per[1] != 3 || per[2] != 2 {
		t.Fatalf("rows per segment %v of %d rows", per, len(rows))
	}

	// What changes the numbers is still refused.
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "-b", third.BaseURL(), "-T", "0.9", "--progress", "none")
	if code != 2 || !strings.Contains(stderr, "--temperature 0.9") {
		t.Fatalf("changed temperature with a moved endpoint: exit %d: %s", code, stderr)
	}
}

// TestResumeKeepsBaseURLFromEnv: a run that took its URL from
// $OPENAI_BASE_URL, resumed once in a shell without the variable (the
// recorded URL serves), still reads a corrected variable on the next
// resume: the first resume used to write base_url_from_env back as false.
func TestResumeKeepsBaseURLFromEnv(t *testing.T) {
	answer := func(llmtest.ChatRequest) llmtest.Reply {
		return llmtest.Reply{Content: `{"label": "Benign", "confidence": 0.7}`}
	}
	first := llmtest.New(llmtest.Options{KeepLog: true, Respond: answer})
	defer first.Close()
	t.Setenv("OPENAI_API_KEY", "sk-env")
	t.Setenv("OPENAI_BASE_URL", first.BaseURL())
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "m-env", "-n", "6", "--seed", "3",
		"--run-id", "env", "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "evals", "network-logs--m-env", "env")
	fromEnv := func(when string) {
		t.Helper()
		meta, err := artifact.ReadMetadata(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !meta.Launch.BaseURLFromEnv {
			t.Fatalf("%s: base_url_from_env was written back false", when)
		}
	}
	fromEnv("first session")

	tearResults(t, dir, 3)
	t.Setenv("OPENAI_BASE_URL", "") // a shell without the variable
	if code, _, stderr = runCLI(t, "eval", "--resume", dir, "--progress", "none"); code != 0 {
		t.Fatalf("resume without the variable: exit %d: %s", code, stderr)
	}
	fromEnv("resume without the variable")

	second := llmtest.New(llmtest.Options{KeepLog: true, Respond: answer})
	defer second.Close()
	tearResults(t, dir, 4)
	t.Setenv("OPENAI_BASE_URL", second.BaseURL())
	if code, _, stderr = runCLI(t, "eval", "--resume", dir, "--progress", "none"); code != 0 {
		t.Fatalf("resume with a corrected variable: exit %d: %s", code, stderr)
	}
	if n := len(second.Bodies()); n != 2 {
		t.Fatalf("the corrected $OPENAI_BASE_URL got %d requests, want the 2 missing rows", n)
	}
	fromEnv("resume with the corrected variable")
}

// TestRunRecordsResolvedConfiguration: metadata.json records every
// parameter in force, defaults included; resume compares configurations,
// so a default given explicitly continues the run and a changed value is
// refused with the parameter named.
func TestRunRecordsResolvedConfiguration(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := runCLI(t, "eval", "--env", "e1", "--model", "builtin:features", "-n", "4", "--run-id", "cfg",
		"--param", "judge_weight=0.5", "--out", out, "--progress", "none")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	dir := filepath.Join(out, "evals", "network-logs--builtin-features", "cfg")
	meta, err := artifact.ReadMetadata(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"reward_source": "executable", "judge_weight": "0.5"}
	if !maps.Equal(meta.Conditions(), want) || !maps.Equal(meta.Params, map[string]string{"judge_weight": "0.5"}) {
		t.Fatalf("config %v params %v, want config %v and the given judge_weight", meta.Conditions(), meta.Params, want)
	}
	// metadata.json keeps each value's type: a number is a number.
	if string(meta.Config["judge_weight"]) != "0.5" || string(meta.Config["reward_source"]) != `"executable"` {
		t.Fatalf("recorded config %s / %s, want 0.5 and \"executable\"", meta.Config["judge_weight"], meta.Config["reward_source"])
	}
	// The episode limits the run held, as numbers of their own.
	raw, err := os.ReadFile(filepath.Join(dir, artifact.MetadataFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), `"limits": {
    "max_turns": 1,
    "tool_budget": 0
  }`) {
		t.Fatalf("metadata.json does not record E1's limits as numbers:\n%s", raw)
	}
	tearResults(t, dir, 2)
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "--param", "judge_weight=0.50", "--param", "reward_source=executable", "--progress", "none")
	if code != 0 {
		t.Fatalf("resume with the run's own values (one a default given explicitly): exit %d: %s", code, stderr)
	}
	code, _, stderr = runCLI(t, "eval", "--resume", dir, "--param", "judge_weight=0.2", "--progress", "none")
	if code != 2 || !strings.Contains(stderr, "judge_weight=0.2") {
		t.Fatalf("resume with another judge_weight: exit %d: %s", code, stderr)
	}
}
