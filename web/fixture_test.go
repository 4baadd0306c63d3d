package web

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/svbench/svbench/artifact"
	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
	"github.com/svbench/svbench/llm"
	"github.com/svbench/svbench/report"
	"github.com/svbench/svbench/runner"
)

// hostile is model output a dashboard must show as text.
const hostile = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`

// fixture is an output root with two real E1 runs (two built-in policies on
// the same examples, reports written) and one hand-made run in progress
// whose rows carry hostile and huge output, tool calls, reasoning and a
// trainer's disagreeing reward.
type fixture struct {
	root          string
	runA, runB    string // ids of the E1 runs
	live          string // id of the running run
	livePath      string // its results.jsonl
	hostileRow    int
	disagreeCount int
}

func newFixture(t testing.TB) *fixture {
	t.Helper()
	root := t.TempDir()
	fx := &fixture{root: root}
	ctx := context.Background()
	e, err := env.Default.New(netlogs.ID, env.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ds, closeDS, err := runner.OpenDataset(ctx, e, "", "", false)
	if err != nil {
		t.Fatal(err)
	}
	defer closeDS()
	for i, policy := range []string{"heuristic", "features"} {
		p, _ := e.(env.PolicyProvider).Policy(policy)
		out, err := runner.Run(ctx, runner.Config{Env: e, Dataset: ds, Client: llm.Builtin{Policy: p}, Model: "builtin:" + policy,
			N: 40, Rollouts: 1, Concurrency: 2, Seed: 7, OutDir: root, RunID: fmt.Sprintf("run-%d", i)})
		if err != nil {
			t.Fatal(err)
		}
		rep, err := report.FromRun(out.Dir, "", report.Options{BootstrapReps: 200})
		if err != nil {
			t.Fatal(err)
		}
		if err := report.WriteDir(out.Dir, rep); err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(root, out.Dir)
		if i == 0 {
			fx.runA = filepath.ToSlash(rel)
		} else {
			fx.runB = filepath.ToSlash(rel)
		}
	}

	dir := filepath.Join(root, "evals", "network-logs--evil", "live")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	fx.live = "evals/network-logs--evil/live"
	cost := 0.0123
	meta := artifact.Metadata{RunID: "live", Environment: netlogs.ID, Model: "evil/model", Dataset: "embedded:e1", Rubric: "default",
		Status: artifact.StatusRunning, Started: time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC), Rollouts: 1, NumExamples: 10,
		UsageByModel: []artifact.ModelUsage{{Role: artifact.RolePolicy, Model: "evil/model", Calls: 4, Usage: env.Usage{PromptTokens: 1000, CompletionTokens: 200, ReasoningTokens: 50}, Cost: &cost}},
		Cost:         &artifact.Cost{Currency: "USD", Total: cost, PricesDate: "2026-11-01", PricesFile: "prices.toml"}}
	if err := artifact.WriteJSONAtomic(filepath.Join(dir, artifact.MetadataFile), &meta); err != nil {
		t.Fatal(err)
	}
	fx.livePath = filepath.Join(dir, artifact.ResultsFile)
	var lines []string
	for i := range 4 {
		lines = append(lines, liveRow(t, i))
	}
	fx.hostileRow = 1
	fx.disagreeCount = 1
	if err := os.WriteFile(fx.livePath, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return fx
}

// liveRow is row i of the hand-made run: 1 is hostile, 2 failed, 3
// disagrees with its trainer's reward.
func liveRow(t testing.TB, i int) string {
	solved := i%2 == 0
	r := artifact.Result{RunID: "live", Index: i, Rollout: 0, ExampleID: fmt.Sprintf("ex-%d", i), Model: "evil/model",
		Prompt: []env.Message{{Role: env.RoleSystem, Content: "You are a SOC analyst."}, {Role: env.RoleUser, Content: fmt.Sprintf("log line %d", i)}},
		Reward: float64(i) / 4, Solved: &solved, Components: map[string]float64{"accuracy": float64(i % 2), "format": 1}, Weights: map[string]float64{"accuracy": 0.8, "format": 0.2},
		Parsed: map[string]any{"label": "Malicious", "confidence": 0.9}, Answer: json.RawMessage(`"Malicious"`), Time: time.Now().UTC()}
	switch i {
	case 1:
		r.Completion = []env.Message{
			{Role: env.RoleAssistant, Content: hostile + strings.Repeat("A", 20000), Reasoning: "thinking " + hostile,
				ToolCalls: []env.ToolCall{{ID: "call_1", Name: "grep_logs", Arguments: `{"pattern": "</pre><script>alert(2)</script>"}`}}},
			{Role: env.RoleTool, ToolCallID: "call_1", Name: "grep_logs", Content: "3 matches " + hostile},
			{Role: env.RoleAssistant, Content: `{"label": "Malicious"} ` + hostile},
		}
		r.ToolCalls = []env.ToolCallRecord{{Turn: 1, Name: "grep_logs", Arguments: "{}", DurationMS: 1.5, Findings: new(3)}}
		r.Parsed["why"] = hostile
	case 2:
		r.Error = "model call: 503 Service Unavailable " + hostile
		r.Reward, r.Solved, r.Components = 0, nil, nil
	case 3:
		rec := 1.0
		r.Trainer = &artifact.Trainer{Reward: &rec}
	}
	if r.Completion == nil && r.Error == "" {
		r.Completion = []env.Message{{Role: env.RoleAssistant, Content: fmt.Sprintf(`{"label": "Benign", "n": %d}`, i)}}
	}
	r.FinalText = env.LastAssistantText(r.Completion)
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

func newTestServer(t testing.TB, root string) *httptest.Server {
	t.Helper()
	s, err := New(root, Options{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func get(t testing.TB, ts *httptest.Server, path string) (int, string, http.Header) {
	t.Helper()
	resp, err := ts.Client().Get(ts.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	buf := make([]byte, 64<<10)
	for {
		n, err := resp.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	return resp.StatusCode, b.String(), resp.Header
}
