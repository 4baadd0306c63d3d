package server

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/svbench/svbench/llm/llmtest"
)

// TestRolloutRealE2Episode plays a whole E2 tool episode through
// /v1/rollout: the trainer's model (a scripted endpoint) calls kube-linter
// through the server, then answers with the finding it was shown; the
// server returns the trajectory with the tool call recorded and a score
// that credits the audit.
func TestRolloutRealE2Episode(t *testing.T) {
	model := llmtest.New(llmtest.Options{Respond: func(req llmtest.ChatRequest) llmtest.Reply {
		last := req.Messages[len(req.Messages)-1]
		if last["role"] != "tool" {
			// First turn: find the file path in the prompt and lint it.
			user, _ := req.Messages[1]["content"].(string)
			path := strings.TrimSpace(strings.SplitN(strings.TrimPrefix(user, "File path: "), "\n", 2)[0])
			args, _ := json.Marshal(map[string]string{"path": path})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "c1", Name: "run_kubelinter", Arguments: string(args)}}}
		}
		// Second turn: report what the tool found.
		content, _ := last["content"].(string)
		var raw []map[string]any
		_ = json.Unmarshal([]byte(content), &raw)
		var vs []map[string]any
		for _, f := range raw {
			vs = append(vs, map[string]any{"id": f["tool"].(string) + "/" + f["rule_id"].(string), "severity": f["severity"]})
		}
		ans, _ := json.Marshal(map[string]any{"violations": vs, "patch": "", "confidence": 0.7})
		return llmtest.Reply{Content: string(ans)}
	}})
	defer model.Close()

	ls := startServer(t, Config{Logger: quietLog, Envs: []string{"e2"}})
	_, page := ls.do(t, "GET", "/v1/environments/e2/examples?limit=40&seed=3", nil)
	var exampleID any
	for _, e := range page["examples"].([]any) {
		ex := e.(map[string]any)
		prompt, _ := json.Marshal(ex["prompt"])
		if strings.Contains(string(prompt), "apiVersion") && !strings.Contains(string(prompt), "kind: Service\\n") {
			exampleID = ex["example_id"]
			break
		}
	}
	if exampleID == nil {
		t.Fatal("no Kubernetes example among the first 40")
	}
	status, body := ls.do(t, "POST", "/v1/rollout", map[string]any{
		"env": "e2", "example_id": exampleID, "base_url": model.BaseURL(), "model": "trainer-policy",
		"sampling": map[string]any{"temperature": 0.0},
	})
	if status != 200 {
		t.Fatalf("rollout: %d %v", status, body)
	}
	ro := body["rollout"].(map[string]any)
	calls, _ := ro["tool_calls"].([]any)
	if len(calls) != 1 || calls[0].(map[string]any)["name"] != "run_kubelinter" || calls[0].(map[string]any)["error"] != nil {
		t.Fatalf("tool calls = %v", ro["tool_calls"])
	}
	if ro["turns"].(float64) != 2 || ro["stop_reason"] != "answered" {
		t.Fatalf("turns %v stop %v", ro["turns"], ro["stop_reason"])
	}
	score := body["score"].(map[string]any)
	comps := score["components"].(map[string]any)
	if comps["tool_observation"].(float64) <= 0 || comps["format"].(float64) != 1 {
		t.Fatalf("score = %v", score)
	}
	if model.Requests() != 2 {
		t.Fatalf("model called %d times", model.Requests())
	}
}
