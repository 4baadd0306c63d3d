package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/configaudit"
	"github.com/svbench/svbench/llm"
)

// ngPost sends a NeMo Gym call with the session cookie (if any) and
// returns the status, the body and the cookie the answer set.
func ngPost(t *testing.T, ls *liveServer, method, path string, body any, cookie *http.Cookie) (int, []byte, *http.Cookie) {
	t.Helper()
	resp, raw := ls.send(t, method, path, body, func(req *http.Request) {
		if cookie != nil {
			req.AddCookie(cookie)
		}
	})
	var set *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == nemoGymCookie {
			set = c
		}
	}
	return resp.StatusCode, raw, set
}

func ngJSON(t *testing.T, raw []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v: %.300s", err, raw)
	}
	return m
}

// outputItems renders an assistant message as Responses API output items.
func outputItems(m env.Message, turn int) []map[string]any {
	var items []map[string]any
	if m.Reasoning != "" {
		items = append(items, map[string]any{"id": fmt.Sprintf("rs_%d", turn), "type": "reasoning",
			"summary": []any{map[string]any{"type": "summary_text", "text": m.Reasoning}}})
	}
	if m.Content != "" {
		items = append(items, map[string]any{"id": fmt.Sprintf("msg_%d", turn), "type": "message", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": m.Content, "annotations": []any{}}}})
	}
	for _, c := range m.ToolCalls {
		items = append(items, map[string]any{"id": "fc_" + c.ID, "type": "function_call", "call_id": c.ID, "name": c.Name, "arguments": c.Arguments, "status": "completed"})
	}
	return items
}

type ngRollout struct {
	row        map[string]any
	verify     map[string]any
	transcript []env.Message
	tools      []string
}

// playNemoGym runs one rollout as NeMo Gym's simple_agent does: seed the
// row, call each function call's tool route with the cookie the last
// answer set, then verify the row plus the response.
func playNemoGym(t *testing.T, ls *liveServer, act func([]env.Message, []env.Tool) env.Message, ex env.Example, task int) ngRollout {
	t.Helper()
	row := map[string]any{
		"responses_create_params": map[string]any{"input": []any{}},
		"verifier_metadata":       map[string]any{"env": "e2", "example_id": ex.ID},
		nemoGymTaskIndex:          task,
	}
	status, raw, cookie := ngPost(t, ls, "POST", "/seed_session", row, nil)
	if status != http.StatusOK || cookie == nil {
		t.Fatalf("seed_session: %d cookie %v: %s", status, cookie, raw)
	}
	var info SessionInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		t.Fatal(err)
	}
	var tools []env.Tool
	for _, raw := range info.Tools {
		var tool struct{ Function env.Tool }
		decode(t, raw, &tool)
		tools = append(tools, tool.Function)
	}
	row["responses_create_params"] = map[string]any{"input": info.Prompt, "tools": info.Tools}
	conv := slices.Clone(info.Prompt)
	var transcript []env.Message
	var output []map[string]any
	var called []string
	for turn := 1; turn <= 8; turn++ {
		msg := act(conv, tools)
		for i := range msg.ToolCalls {
			if msg.ToolCalls[i].ID == "" {
				msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", turn, i)
			}
		}
		output = append(output, outputItems(msg, turn)...)
		transcript = append(transcript, msg)
		conv = append(conv, msg)
		if len(msg.ToolCalls) == 0 {
			break
		}
		for _, c := range msg.ToolCalls {
			status, raw, set := ngPost(t, ls, "POST", "/"+c.Name, []byte(c.Arguments), cookie)
			if status != http.StatusOK || bytes.HasPrefix(raw, []byte(`{"error"`)) {
				t.Fatalf("tool %s: %d %s", c.Name, status, raw)
			}
			if set == nil || set.Value != cookie.Value {
				t.Fatalf("tool %s: the answer did not set the session cookie again (%v)", c.Name, set)
			}
			cookie = set
			called = append(called, c.Name)
			output = append(output, map[string]any{"type": "function_call_output", "call_id": c.ID, "output": string(raw)})
			tm := env.Message{Role: env.RoleTool, ToolCallID: c.ID, Name: c.Name, Content: string(raw)}
			transcript = append(transcript, tm)
			conv = append(conv, tm)
		}
	}
	verifyReq := map[string]any{}
	for k, v := range row {
		verifyReq[k] = v
	}
	verifyReq["response"] = map[string]any{"id": "resp_1", "object": "response", "model": "policy", "output": output,
		"usage": map[string]any{"input_tokens": 100, "output_tokens": 20, "total_tokens": 120}}
	status, raw, _ = ngPost(t, ls, "POST", "/verify", verifyReq, cookie)
	if status != http.StatusOK {
		t.Fatalf("verify: %d %s", status, raw)
	}
	return ngRollout{row: row, verify: ngJSON(t, raw), transcript: transcript, tools: called}
}

// TestNemoGymE2Episodes: E2 rollouts with kube-linter and trivy calls
// played through NeMo Gym's routes end with the reward `svbench score`
// (/v1/score) gives the same transcript; aggregate_metrics profiles the
// two verify responses.
func TestNemoGymE2Episodes(t *testing.T) {
	ls, ds, act := e2Rig(t)
	var verifies []map[string]any
	for _, kind := range []string{"k8s", "tf"} {
		i := slices.IndexFunc(ds.Examples, func(ex env.Example) bool { return ex.Meta["fixture_type"] == kind })
		if i < 0 {
			t.Fatalf("no %s row", kind)
		}
		ex := ds.Examples[i]
		ro := playNemoGym(t, ls, act, ex, len(verifies))
		want := map[string]string{"k8s": configaudit.FnKubeLinter, "tf": configaudit.FnTrivy}[kind]
		if !slices.Contains(ro.tools, want) {
			t.Errorf("%s row %s: tools called through routes %v, want %s", kind, ex.ID, ro.tools, want)
		}
		v := ro.verify
		score := scoreTranscript(t, ls, "e2", ex.ID, ro.transcript)
		if v["reward"] != score["reward"] || v["svbench_solved"] != score["solved"] {
			t.Errorf("%s: verify reward %v solved %v, /v1/score of the transcript %v %v", kind, v["reward"], v["svbench_solved"], score["reward"], score["solved"])
		}
		gc, _ := v["reward_components"].(map[string]any)
		wc, _ := score["components"].(map[string]any)
		if len(wc) == 0 || len(gc) != len(wc) {
			t.Fatalf("%s: reward_components %v vs components %v", kind, gc, wc)
		}
		for k, w := range wc {
			if math.Abs(gc[k].(float64)-w.(float64)) > 1e-12 {
				t.Errorf("%s: component %s %v vs %v", kind, k, gc[k], w)
			}
			if top, ok := v[k].(float64); !ok || top != gc[k] {
				t.Errorf("%s: top-level %s = %v, reward_components has %v", kind, k, v[k], gc[k])
			}
		}
		// The echo: the row's fields come back as sent.
		if meta, _ := v["verifier_metadata"].(map[string]any); meta["example_id"] != ex.ID {
			t.Errorf("%s: verify did not echo verifier_metadata: %v", kind, v["verifier_metadata"])
		}
		if _, ok := v["responses_create_params"]; !ok {
			t.Errorf("%s: verify did not echo responses_create_params", kind)
		}
		if _, ok := v["response"].(map[string]any); !ok {
			t.Errorf("%s: verify did not echo response", kind)
		}
		verifies = append(verifies, v)
	}
	if n := ls.sessions.count(); n != 0 {
		t.Errorf("%d sessions still open after verify", n)
	}

	status, raw, _ := ngPost(t, ls, "POST", "/aggregate_metrics", map[string]any{"verify_responses": verifies}, nil)
	if status != http.StatusOK {
		t.Fatalf("aggregate_metrics: %d %s", status, raw)
	}
	var agg NemoGymMetrics
	if err := json.Unmarshal(raw, &agg); err != nil {
		t.Fatal(err)
	}
	r0, r1 := verifies[0]["reward"].(float64), verifies[1]["reward"].(float64)
	if got := agg.AgentMetrics["mean/reward"]; got != (r0+r1)/2 {
		t.Errorf("mean/reward %v, want %v", got, (r0+r1)/2)
	}
	if agg.KeyMetrics["mean/reward"] == nil || agg.KeyMetrics["mean/svbench_solved"] == nil || agg.AgentMetrics["mean/total_tokens"] != 120.0 {
		t.Errorf("key metrics %v", agg.KeyMetrics)
	}
	for k := range verifies[0]["reward_components"].(map[string]any) {
		if _, ok := agg.KeyMetrics["mean/"+k]; !ok {
			t.Errorf("no mean/%s in key_metrics", k)
		}
	}
	if len(agg.GroupLevelMetrics) != 2 || agg.GroupLevelMetrics[1]["mean/reward"] != r1 || agg.GroupLevelMetrics[1][nemoGymTaskIndex] != 1.0 {
		t.Errorf("group_level_metrics %v", agg.GroupLevelMetrics)
	}
}

// TestNemoGymRoutesErrors: a tool call without a seeded session, a stale
// cookie, a row without verifier_metadata; reverify_mode; NeMo Gym's
// rollout prefix.
func TestNemoGymRoutesErrors(t *testing.T) {
	ls := startServer(t, Config{Envs: []string{"e2"}, Logger: quietLog})
	status, raw, _ := ngPost(t, ls, "POST", "/"+configaudit.FnKubeLinter, []byte(`{"path":"x.yaml"}`), nil)
	if status != http.StatusBadRequest || !strings.Contains(string(raw), CodeNotSeeded) || !strings.Contains(string(raw), "/seed_session") {
		t.Errorf("tool call without a session: %d %s", status, raw)
	}
	status, raw, _ = ngPost(t, ls, "POST", "/"+configaudit.FnTrivy, []byte(`{}`), &http.Cookie{Name: nemoGymCookie, Value: "ses_gone"})
	if status != http.StatusNotFound || !strings.Contains(string(raw), CodeSessionNotFound) {
		t.Errorf("tool call with a stale cookie: %d %s", status, raw)
	}
	status, raw, _ = ngPost(t, ls, "POST", "/seed_session", map[string]any{"responses_create_params": map[string]any{}}, nil)
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "verifier_metadata") {
		t.Errorf("seed without metadata: %d %s", status, raw)
	}
	status, raw, _ = ngPost(t, ls, "POST", "/verify", map[string]any{"responses_create_params": map[string]any{}, "response": map[string]any{"output": []any{}}}, nil)
	if status != http.StatusBadRequest || !strings.Contains(string(raw), "verifier_metadata") {
		t.Errorf("verify without metadata: %d %s", status, raw)
	}
	for _, p := range []string{"/reverify_mode", "/ng-rollout/r-1/reverify_mode"} {
		status, raw, _ = ngPost(t, ls, "GET", p, nil, nil)
		if status != http.StatusOK || strings.TrimSpace(string(raw)) != `"stateless"` {
			t.Errorf("GET %s: %d %s", p, status, raw)
		}
	}
	if status, _, _ = ngPost(t, ls, "GET", "/ng-rollout/r-1/metrics", nil, nil); status != http.StatusNotFound {
		t.Errorf("the rollout prefix serves a non-NeMo route: %d", status)
	}
}

// TestNemoGymTranscript: output items between two tool outputs are one
// assistant message.
func TestNemoGymTranscript(t *testing.T) {
	var items []llm.ResponseItem
	raw := `[{"type":"reasoning","id":"r","summary":[{"type":"summary_text","text":"think"}]},
	{"type":"message","role":"assistant","content":[{"type":"output_text","text":"checking","annotations":[]}]},
	{"type":"function_call","call_id":"c1","name":"run_trivy","arguments":"{\"path\":\"main.tf\"}"},
	{"type":"function_call_output","call_id":"c1","output":"[]"},
	{"type":"web_search_call","id":"w"},
	{"type":"message","role":"assistant","content":[{"type":"output_text","text":"done","annotations":[]}]}]`
	if err := json.Unmarshal([]byte(raw), &items); err != nil {
		t.Fatal(err)
	}
	got, skipped := llm.TranscriptFromResponse(items)
	want := []env.Message{
		{Role: env.RoleAssistant, Content: "checking", Reasoning: "think", ToolCalls: []env.ToolCall{{ID: "c1", Name: "run_trivy", Arguments: `{"path":"main.tf"}`}}},
		{Role: env.RoleTool, ToolCallID: "c1", Name: "run_trivy", Content: "[]"},
		{Role: env.RoleAssistant, Content: "done"},
	}
	gj, _ := json.Marshal(got)
	wj, _ := json.Marshal(want)
	if !bytes.Equal(gj, wj) || skipped != 1 {
		t.Errorf("transcript %s (skipped %d), want %s (skipped 1)", gj, skipped, wj)
	}
}
