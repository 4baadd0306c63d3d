package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"testing"

	"github.com/svbench/svbench/env"
	"github.com/svbench/svbench/envs/netlogs"
)

func e1Config() Config {
	return Config{Envs: []string{"e1"}, Logger: quietLog}
}

// e1Completions are answers a policy might give to a row whose gold label is
// answer: right, wrong, abstaining, malformed, chatty.
func e1Completions(answer string) []string {
	wrong := "Benign"
	if answer == "Benign" {
		wrong = "Malicious"
	}
	return []string{
		fmt.Sprintf(`{"label": %q, "confidence": 0.9}`, answer),
		fmt.Sprintf(`{"label": %q, "confidence": 0.8, "rationale": "looks off"}`, wrong),
		`{"label": "Abstain", "confidence": 0.3}`,
		`I cannot decide.`,
		fmt.Sprintf("<think>hmm</think>\n```json\n{\"label\": %q, \"confidence\": 1.5}\n```", answer),
	}
}

// TestE1ScoresMatchInProcess: every reward the server returns for the E1
// mini set equals what the environment computes in-process, for both
// rubrics and every way of naming the example.
func TestE1ScoresMatchInProcess(t *testing.T) {
	ls := startServer(t, e1Config())
	e := netlogs.New()
	ds, err := e.Load(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var items []any
	var want []env.Score
	for i, ex := range ds.Examples {
		if i >= 40 {
			break
		}
		var ans string
		_ = json.Unmarshal(ex.Answer, &ans)
		for j, c := range e1Completions(ans) {
			rubric := e.Info().Rubrics[j%len(e.Info().Rubrics)]
			item := map[string]any{"env": []string{"e1", "network-logs", "sv-env-network-logs"}[j%3], "completion": c, "rubric": rubric}
			switch j % 3 {
			case 0:
				item["example_id"] = ex.ID
			case 1:
				item["answer"] = ans
			default:
				item["example"] = map[string]any{"id": ex.ID, "answer": ans}
			}
			items = append(items, item)
			sc, err := e.Score(context.Background(), ex, &env.Rollout{Completion: env.CompletionText(c).Messages}, rubric)
			if err != nil {
				t.Fatal(err)
			}
			want = append(want, sc)
		}
	}
	status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": items})
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	results := body["results"].([]any)
	for i, r := range results {
		res := r.(map[string]any)
		if res["error"] != nil {
			t.Fatalf("item %d: %v", i, res["error"])
		}
		if got := res["reward"].(float64); math.Abs(got-want[i].Total) > 1e-12 {
			t.Errorf("item %d: reward %v, in-process %v", i, got, want[i].Total)
		}
		for k, v := range want[i].Components {
			if got := res["components"].(map[string]any)[k].(float64); math.Abs(got-v) > 1e-12 {
				t.Errorf("item %d component %s: %v vs %v", i, k, got, v)
			}
		}
	}
}

func TestE1Examples(t *testing.T) {
	ls := startServer(t, e1Config())
	status, body := ls.do(t, "GET", "/v1/environments/sv-env-network-logs/examples?limit=5&seed=1", nil)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	exs := body["examples"].([]any)
	if len(exs) != 5 || body["env"] != netlogs.ID {
		t.Fatalf("%v", body)
	}
	ex := exs[0].(map[string]any)
	prompt := ex["prompt"].([]any)
	if prompt[0].(map[string]any)["content"] != netlogs.SystemPrompt || ex["example_id"] == "" {
		t.Errorf("example: %v", ex)
	}
}

// TestE1GetReward covers every label form of the OpenRLHF protocol.
func TestE1GetReward(t *testing.T) {
	ls := startServer(t, e1Config())
	e := netlogs.New()
	ds, _ := e.Load(t.Context(), "")
	ex := ds.Examples[0]
	var ans string
	_ = json.Unmarshal(ex.Answer, &ans)
	prompt := "<|im_start|>user\n" + ex.Prompt[1].Content + "<|im_end|>\n<|im_start|>assistant\n"
	right := fmt.Sprintf(`{"label": %q, "confidence": 0.9}<|im_end|>`, ans)
	refLabel, _ := json.Marshal(map[string]any{"env": "e1", "example_id": ex.ID, "rubric": "reference"})
	ansLabel, _ := json.Marshal(map[string]any{"env": "e1", "answer": ans})
	req := RewardRequest{
		Query:   []string{prompt + right, prompt + right, prompt + right, prompt + right, "no prefix " + right},
		Prompts: []string{prompt, prompt, prompt, prompt, prompt},
		Labels:  []string{ex.ID, string(refLabel), string(ansLabel), "no-such-id", ex.ID},
	}
	status, body := ls.do(t, "POST", "/get_reward", req)
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	var resp RewardResponse
	raw, _ := json.Marshal(body)
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	direct := func(rubric string) float64 {
		sc, err := e.Score(context.Background(), ex, &env.Rollout{Completion: env.CompletionText(right).Messages}, rubric)
		if err != nil {
			t.Fatal(err)
		}
		return sc.Total
	}
	wantRewards := []float64{direct(""), direct("reference"), direct(""), 0, resp.Rewards[4]}
	for i, w := range wantRewards {
		if math.Abs(resp.Rewards[i]-w) > 1e-12 || resp.Scores[i] != resp.Rewards[i] {
			t.Errorf("item %d: reward %v score %v, want %v", i, resp.Rewards[i], resp.Scores[i], w)
		}
	}
	if resp.Errors[3] == "" || resp.ExtraLogs["svbench_error"][3] != 1 || resp.ExtraLogs["svbench_error"][0] != 0 {
		t.Errorf("unknown id not reported: %v %v", resp.Errors, resp.ExtraLogs["svbench_error"])
	}
	if resp.ExtraLogs["svbench_prompt_mismatch"][4] != 1 || resp.ExtraLogs["svbench_prompt_mismatch"][0] != 0 {
		t.Errorf("prompt mismatch flags: %v", resp.ExtraLogs["svbench_prompt_mismatch"])
	}
	for name, vals := range resp.ExtraLogs {
		if len(vals) != len(req.Query) {
			t.Errorf("extra_logs[%s] has %d values", name, len(vals))
		}
	}
	if _, ok := resp.ExtraLogs["accuracy"]; !ok {
		t.Errorf("components missing from extra_logs: %v", resp.ExtraLogs)
	}
}

// FuzzScoreBody: whatever arrives as a /v1/score body, the answer is JSON
// with a 2xx or 4xx status, never a 5xx or a panic.
func FuzzScoreBody(f *testing.F) {
	for _, seed := range []string{
		`{"items":[{"env":"e1","example_id":"x","completion":"{\"label\":\"Benign\",\"confidence\":0.5}"}]}`,
		`{"items":[{"env":"e1","answer":"Malicious","completion":[{"role":"assistant","content":"{}"}]}]}`,
		`{"items":[{"env":"e1","example":{"answer":1},"completion":{"content":"{"}}]}`,
		`{"items":[{"env":"e1","answer":"Benign","completion":[{"role":""}]}]}`,
		`{"items":[null, 1, "x", [], {}]}`,
		`{"items":`, `[]`, `null`, ``,
	} {
		f.Add([]byte(seed))
	}
	s, err := New(Config{Envs: []string{"e1"}, Logger: quietLog, MaxBody: 1 << 16})
	if err != nil {
		f.Fatal(err)
	}
	if err := s.Load(context.Background()); err != nil {
		f.Fatal(err)
	}
	h := s.Handler()
	f.Fuzz(func(t *testing.T, body []byte) {
		rec := newRecorder()
		req, _ := http.NewRequest("POST", "/v1/score", bytes.NewReader(body))
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code < 200 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
		if !json.Valid(rec.Body.Bytes()) {
			t.Fatalf("response is not JSON: %q", rec.Body.String())
		}
	})
}

// TestReasoningIsNotTheAnswer: /v1/score and /get_reward score the answer a
// completion commits to, as eval does: a Qwen3 reply hedging inside its
// thinking earns what its final answer earns (it scored −0.218 through
// OpenRLHF's client when the first JSON object won), and a thinking block
// left open commits to nothing.
func TestReasoningIsNotTheAnswer(t *testing.T) {
	ls := startServer(t, e1Config())
	e := netlogs.New()
	ds, err := e.Load(t.Context(), "")
	if err != nil {
		t.Fatal(err)
	}
	var ex env.Example
	for _, x := range ds.Examples {
		var a string
		if json.Unmarshal(x.Answer, &a) == nil && a == "Malicious" {
			ex = x
			break
		}
	}
	right := `{"label": "Malicious", "confidence": 0.9}`
	hedge := `<think>maybe {"label": "Benign", "confidence": 0.6}?</think>` + right
	inProcess := func(text string) float64 {
		sc, err := e.Score(t.Context(), ex, &env.Rollout{Completion: env.CompletionText(text).Messages}, "")
		if err != nil {
			t.Fatal(err)
		}
		return sc.Total
	}
	score := func(text string) float64 {
		status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{map[string]any{"env": "e1", "example_id": ex.ID, "completion": text}}})
		if status != 200 {
			t.Fatalf("%d %v", status, body)
		}
		return body["results"].([]any)[0].(map[string]any)["reward"].(float64)
	}
	if got, want := score(hedge), inProcess(right); got != want || got <= 0 {
		t.Errorf("/v1/score of the hedge = %v, want the final answer's %v", got, want)
	}
	if got, want := score(`<think>`+right), inProcess(""); got != want {
		t.Errorf("/v1/score of an open block = %v, want no answer's %v", got, want)
	}
	msgs := []any{map[string]any{"role": "assistant", "content": hedge}}
	status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{map[string]any{"env": "e1", "example_id": ex.ID, "completion": msgs}}})
	if r := body["results"].([]any)[0].(map[string]any)["reward"]; status != 200 || r != inProcess(right) {
		t.Errorf("/v1/score of messages: %d %v", status, body)
	}
	status, body = ls.do(t, "POST", "/get_reward?env=e1", map[string]any{"query": []string{"P:" + hedge}, "prompts": []string{"P:"}, "labels": []string{ex.ID}})
	if status != 200 || body["rewards"].([]any)[0] != inProcess(right) {
		t.Errorf("/get_reward of the hedge: %d %v, want %v", status, body, inProcess(right))
	}
}
