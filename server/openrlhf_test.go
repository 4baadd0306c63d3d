package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/svbench/svbench/env"
)

// syncBuffer is a log sink the server's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func decodeReward(t *testing.T, body map[string]any) RewardResponse {
	t.Helper()
	var resp RewardResponse
	raw, _ := json.Marshal(body)
	if err := json.Unmarshal(raw, &resp); err != nil {
		t.Fatal(err)
	}
	return resp
}

const toyPrompt = "<|im_start|>system\nAnswer yes or no as {\"answer\": \"yes\"} or {\"answer\": \"no\"}.<|im_end|>\n" +
	"<|im_start|>user\nIs 0 even? (For example, 1 is not: {\"answer\": \"no\"}.)<|im_end|>\n<|im_start|>assistant\n"

// TestGetRewardURLToken: OpenRLHF's client sends no headers, so /get_reward
// takes the token on the URL too, compared as the header is; no other
// endpoint does, and the token never reaches the log.
func TestGetRewardURLToken(t *testing.T) {
	const tok = "tok-3f9a2c71d0e4"
	var logs syncBuffer
	cfg := toyConfig()
	cfg.Token = tok
	cfg.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ls := startServer(t, cfg)
	body := RewardRequest{Query: []string{toyPrompt + `{"answer": "yes"}`}, Prompts: []string{toyPrompt}, Labels: []string{"q0"}}
	for _, c := range []struct {
		name, method, path string
		hdr                []string
		want               int
	}{
		{"url token", "POST", "/get_reward?token=" + tok, nil, 200},
		{"url token with env", "POST", "/get_reward?env=toy&token=" + tok + "&labels=id", nil, 200},
		{"header still works", "POST", "/get_reward", []string{"Authorization", "Bearer " + tok}, 200},
		{"wrong url token", "POST", "/get_reward?token=" + tok + "x", nil, 401},
		{"empty url token", "POST", "/get_reward?token=", nil, 401},
		{"no token", "POST", "/get_reward", nil, 401},
		{"wrong header beats right url token", "POST", "/get_reward?token=" + tok, []string{"Authorization", "Bearer nope"}, 401},
		{"url token elsewhere refused", "GET", "/v1/environments?token=" + tok, nil, 401},
		{"url token on /v1/score refused", "POST", "/v1/score?token=" + tok, nil, 401},
	} {
		t.Run(c.name, func(t *testing.T) {
			var b any = body
			if c.method == "GET" {
				b = nil
			}
			status, out := ls.do(t, c.method, c.path, b, c.hdr...)
			if status != c.want {
				t.Fatalf("%d %v, want %d", status, out, c.want)
			}
			if status == 200 {
				if r := decodeReward(t, out); len(r.Rewards) != 1 || r.Rewards[0] != 1.1 {
					t.Errorf("rewards %v, want [1.1]", r.Rewards)
				}
			} else if code := errCode(t, out); code != CodeUnauthorized {
				t.Errorf("code %s", code)
			}
			if strings.Contains(fmt.Sprint(out), tok) {
				t.Errorf("token echoed in the answer: %v", out)
			}
		})
	}
	// An item error quotes nothing from the URL either.
	ls.do(t, "POST", "/get_reward?token="+tok+"&env=nosuch", body)
	ls.do(t, "POST", "/nosuch?token="+tok, body)
	got := logs.String()
	if !strings.Contains(got, "/get_reward") {
		t.Fatalf("no access log captured: %q", got)
	}
	if strings.Contains(got, tok) {
		t.Errorf("token in the log:\n%s", got)
	}
}

// TestGetRewardAnswerLabels: with labels=answer declared on the URL a label
// is the plain gold answer and scores as the example id it stands for; it
// is never guessed from a label's look.
func TestGetRewardAnswerLabels(t *testing.T) {
	ls := startServer(t, toyConfig())
	completions := []string{`{"answer": "yes"}`, `{"answer": "no"}`, `nonsense`}
	byID := func(path string, labels []string) RewardResponse {
		t.Helper()
		q := make([]string, len(completions))
		p := make([]string, len(completions))
		for i, c := range completions {
			q[i], p[i] = toyPrompt+c, toyPrompt
		}
		status, out := ls.do(t, "POST", path, RewardRequest{Query: q, Prompts: p, Labels: labels})
		if status != 200 {
			t.Fatalf("%s: %d %v", path, status, out)
		}
		return decodeReward(t, out)
	}
	want := byID("/get_reward", []string{"q0", "q0", "q0"}) // q0's answer is "yes"
	if want.Rewards[0] != 1.1 || slices.ContainsFunc(want.Errors, func(e string) bool { return e != "" }) {
		t.Fatalf("by id: %+v", want)
	}
	for _, c := range []struct {
		path   string
		labels []string
	}{
		{"/get_reward?labels=answer", []string{"yes", " yes\n", "yes"}},
		{"/get_reward?labels=answer&env=toy", []string{"yes", "yes", "yes"}},
		{"/get_reward?labels=answer_json", []string{`"yes"`, ` "yes" `, `"yes"`}},
	} {
		got := byID(c.path, c.labels)
		if !slices.Equal(got.Rewards, want.Rewards) || !slices.Equal(got.Errors, want.Errors) {
			t.Errorf("%s %q: rewards %v errors %q, want %v", c.path, c.labels, got.Rewards, got.Errors, want.Rewards)
		}
		if !maps.EqualFunc(got.ExtraLogs, want.ExtraLogs, slices.Equal) {
			t.Errorf("%s: extra_logs %v, want %v", c.path, got.ExtraLogs, want.ExtraLogs)
		}
	}
	// Undeclared, an answer is an (unknown) example id: not guessed.
	if got := byID("/get_reward", []string{"yes", "yes", "yes"}); got.Errors[0] == "" || got.Rewards[0] != 0 {
		t.Errorf("plain answer without labels=answer: %+v", got)
	}
	// Declared, an example id is an answer the environment refuses.
	if got := byID("/get_reward?labels=answer", []string{"q0", "q0", "q0"}); got.Errors[0] == "" {
		t.Errorf("example id under labels=answer scored: %+v", got)
	}
	if got := byID("/get_reward?labels=answer_json", []string{"yes", "yes", "yes"}); !strings.Contains(got.Errors[0], "not JSON") {
		t.Errorf("plain text under labels=answer_json: %q", got.Errors)
	}
	status, out := ls.do(t, "POST", "/get_reward?labels=guess", RewardRequest{Query: []string{"x"}, Labels: []string{"q0"}})
	if status != 400 || errCode(t, out) != CodeBadRequest || !strings.Contains(fmt.Sprint(out), "labels=answer") {
		t.Errorf("unknown label mode: %d %v", status, out)
	}
}

// TestGetRewardLeftTruncation: OpenRLHF keeps a long prompt's last
// max_prompt_length tokens and decodes the query from them, while
// "prompts" holds the whole prompt; the item scores as the untruncated one.
func TestGetRewardLeftTruncation(t *testing.T) {
	ls := startServer(t, toyConfig())
	right := `{"answer": "yes"}`
	cut := strings.Index(toyPrompt, "Is 0 even?")
	tail := toyPrompt[cut:]
	cases := []struct {
		name, query string
		truncated   float64
		mismatch    float64
		reward      float64
	}{
		{"whole prompt", toyPrompt + right, 0, 0, 1.1},
		{"left-truncated", tail + right, 1, 0, 1.1},
		{"cut inside a word", toyPrompt[cut+3:] + right, 1, 0, 1.1},
		{"split character", "\uFFFD" + tail + right, 1, 0, 1.1},
		{"sentencepiece drops the leading space", toyPrompt[strings.Index(toyPrompt, " even?")+1:] + right, 1, 0, 1.1},
		{"truncated to the last tokens", "<|im_start|>assistant\n" + right, 1, 0, 1.1},
		{"truncated, empty completion", tail, 1, 0, 0},
		{"true mismatch", "something else entirely " + right, 0, 1, -1},
		{"too short an overlap is a mismatch", "\n" + right, 0, 1, -1},
	}
	req := RewardRequest{}
	for _, c := range cases {
		req.Query = append(req.Query, c.query)
		req.Prompts = append(req.Prompts, toyPrompt)
		req.Labels = append(req.Labels, "q0")
	}
	status, out := ls.do(t, "POST", "/get_reward", req)
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	resp := decodeReward(t, out)
	for _, k := range []string{"svbench_prompt_truncated", "svbench_prompt_mismatch"} {
		if len(resp.ExtraLogs[k]) != len(cases) {
			t.Fatalf("extra_logs[%s] = %v", k, resp.ExtraLogs[k])
		}
	}
	for i, c := range cases {
		if got := resp.ExtraLogs["svbench_prompt_truncated"][i]; got != c.truncated {
			t.Errorf("%s: svbench_prompt_truncated %v, want %v", c.name, got, c.truncated)
		}
		if got := resp.ExtraLogs["svbench_prompt_mismatch"][i]; got != c.mismatch {
			t.Errorf("%s: svbench_prompt_mismatch %v, want %v", c.name, got, c.mismatch)
		}
		if c.reward >= 0 && resp.Rewards[i] != c.reward {
			t.Errorf("%s: reward %v, want %v", c.name, resp.Rewards[i], c.reward)
		}
	}
}

func TestCutPrompt(t *testing.T) {
	for _, c := range []struct {
		query, prompt, want string
		how                 promptMatch
	}{
		{"PROMPT-completion", "PROMPT-", "completion", promptWhole},
		{"0123456789abcdefXYZ", "zz0123456789abcdef", "XYZ", promptTruncated},
		// The longest tail wins: a repetitive prompt whose tail recurs.
		{"abababababababababababX", "xxabababababababababababab", "X", promptTruncated},
		{"aaaaaaaaaaaaaaaaaaaab", strings.Repeat("a", 1000), "b", promptTruncated},
		{"0123456789abcdeXYZ", "zz0123456789abcde", "0123456789abcdeXYZ", promptMismatch},
		{"", "prompt", "", promptMismatch},
		{"anything", "", "anything", promptWhole},
	} {
		got, how := cutPrompt(c.query, c.prompt)
		if got != c.want || how != c.how {
			t.Errorf("cutPrompt(%q, %q) = %q, %v; want %q, %v", c.query, c.prompt, got, how, c.want, c.how)
		}
	}
}

// describedToy is the toy environment declaring its rubrics' components,
// as every built-in environment does.
type describedToy struct{ toyEnv }

func (describedToy) Info() env.Info {
	i := toyEnv{}.Info()
	i.ID, i.Aliases = "toyd", nil
	return i
}

func (describedToy) DescribeRubric(rubric string) (env.RubricInfo, error) {
	switch rubric {
	case "", "default":
		return env.NewRubricInfo("default", env.RubricComponent{Name: "correct", Weight: 1, Max: 1}, env.RubricComponent{Name: "format", Weight: 0.1, Max: 1}), nil
	case "strict":
		return env.NewRubricInfo("strict", env.RubricComponent{Name: "correct", Weight: 1, Max: 1}, env.RubricComponent{Name: "format", Max: 1}), nil
	}
	return env.RubricInfo{}, fmt.Errorf("unknown rubric %q", rubric)
}

// TestGetRewardExtraLogsKeys: OpenRLHF posts one item per request and
// stacks the answers' extra_logs by the first item's keys, so a failed item
// answers the same keys as a scored one.
func TestGetRewardExtraLogsKeys(t *testing.T) {
	reg := env.NewRegistry()
	reg.Register(env.Spec{ID: "toyd", New: func(env.Options) (env.Environment, error) { return describedToy{}, nil }})
	ls := startServer(t, Config{Registry: reg, Logger: quietLog})
	one := func(query, label string) RewardResponse {
		t.Helper()
		status, out := ls.do(t, "POST", "/get_reward", RewardRequest{Query: []string{toyPrompt + query}, Prompts: []string{toyPrompt}, Labels: []string{label}})
		if status != 200 {
			t.Fatalf("%d %v", status, out)
		}
		return decodeReward(t, out)
	}
	scored := one(`{"answer": "yes"}`, "q0")
	if scored.Errors[0] != "" || scored.ExtraLogs["correct"][0] != 1 {
		t.Fatalf("scored item: %+v", scored)
	}
	wantKeys := slices.Sorted(maps.Keys(scored.ExtraLogs))
	for _, c := range []struct{ name, query, label string }{
		{"unknown example id", `{"answer": "yes"}`, "no-such-id"},
		{"empty label", `{"answer": "yes"}`, " "},
		{"scorer error", "ERROR", "q0"},
		{"unknown rubric", `{"answer": "yes"}`, `{"example_id": "q0", "rubric": "nope"}`},
	} {
		failed := one(c.query, c.label)
		if failed.Errors[0] == "" || failed.ExtraLogs["svbench_error"][0] != 1 {
			t.Errorf("%s: not reported as failed: %+v", c.name, failed)
		}
		if keys := slices.Sorted(maps.Keys(failed.ExtraLogs)); !slices.Equal(keys, wantKeys) {
			t.Errorf("%s: extra_logs keys %v, a scored item's %v", c.name, keys, wantKeys)
		}
		for k, v := range failed.ExtraLogs {
			if k != "svbench_error" && (len(v) != 1 || v[0] != 0) {
				t.Errorf("%s: extra_logs[%s] = %v, want [0]", c.name, k, v)
			}
		}
	}
}
