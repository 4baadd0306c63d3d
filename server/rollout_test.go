package server

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/svbench/svbench/llm"
)

// fakeModel is a minimal OpenAI-compatible chat completions endpoint: it
// calls the lookup tool once, then answers yes.
type fakeModel struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []map[string]any
	auth   []string
	calls  atomic.Int64
	status int // non-zero: answer every call with this status
	// When hold is set, every call signals arrived (if there is room) and
	// then waits for hold to be closed, so a test can keep a rollout
	// inside its model call for exactly as long as it needs.
	arrived chan struct{}
	hold    chan struct{}
}

func newFakeModel(t *testing.T) *fakeModel {
	f := &fakeModel{}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.calls.Add(1)
		raw, _ := io.ReadAll(r.Body)
		var body map[string]any
		_ = json.Unmarshal(raw, &body)
		f.mu.Lock()
		f.bodies = append(f.bodies, body)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if f.hold != nil {
			select {
			case f.arrived <- struct{}{}:
			default:
			}
			select {
			case <-f.hold:
			case <-r.Context().Done():
				return
			}
		}
		w.Header().Set("Content-Type", "application/json")
		if f.status != 0 {
			w.WriteHeader(f.status)
			io.WriteString(w, `{"error":{"message":"boom","type":"server_error"}}`)
			return
		}
		msgs, _ := body["messages"].([]any)
		msg := map[string]any{"role": "assistant", "content": `{"answer": "yes"}`}
		finish := "stop"
		if last, _ := msgs[len(msgs)-1].(map[string]any); last["role"] != "tool" {
			msg = map[string]any{"role": "assistant", "content": "", "tool_calls": []any{map[string]any{
				"id": "call_1", "type": "function", "function": map[string]any{"name": "lookup", "arguments": `{"q":"even"}`}}}}
			finish = "tool_calls"
		}
		json.NewEncoder(w).Encode(map[string]any{
			"id": "c", "object": "chat.completion", "created": 0, "model": body["model"],
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
	}))
	t.Cleanup(f.Close)
	return f
}

func TestRolloutEpisode(t *testing.T) {
	model := newFakeModel(t)
	cfg := toyConfig()
	cfg.RolloutKeyEnvs = []string{"SVBENCH_TEST_ROLLOUT_KEY"}
	t.Setenv("SVBENCH_TEST_ROLLOUT_KEY", "sk-test")
	ls := startServer(t, cfg)
	status, body := ls.do(t, "POST", "/v1/rollout", map[string]any{
		"env": "t1", "example_id": "q0", "base_url": model.URL + "/v1", "model": "policy-7b",
		"sampling": map[string]any{"temperature": 0, "max_tokens": 64}, "api_key_env": "SVBENCH_TEST_ROLLOUT_KEY",
	})
	if status != 200 {
		t.Fatalf("%d %v", status, body)
	}
	ro := body["rollout"].(map[string]any)
	if ro["turns"].(float64) != 2 || ro["stop_reason"] != "answered" || len(ro["tool_calls"].([]any)) != 1 {
		t.Errorf("rollout: %v", ro)
	}
	if n := len(ro["completion"].([]any)); n != 3 { // tool call, tool result, answer
		t.Errorf("completion has %d messages", n)
	}
	sc := body["score"].(map[string]any)
	if sc["reward"].(float64) < 1.09 || sc["components"].(map[string]any)["correct"].(float64) != 1 {
		t.Errorf("score: %v", sc)
	}
	model.mu.Lock()
	defer model.mu.Unlock()
	if len(model.bodies) != 2 {
		t.Fatalf("model saw %d calls", len(model.bodies))
	}
	first := model.bodies[0]
	if first["model"] != "policy-7b" || first["temperature"] != float64(0) || first["tools"] == nil {
		t.Errorf("request to model: %v", first)
	}
	if model.auth[0] != "Bearer sk-test" {
		t.Errorf("auth header %q", model.auth[0])
	}
}

func TestRolloutGuards(t *testing.T) {
	model := newFakeModel(t)
	cfg := toyConfig()
	cfg.RolloutKeyEnvs = []string{"SVBENCH_TEST_UNSET_KEY"}
	ls := startServer(t, cfg)
	req := func(over map[string]any) map[string]any {
		m := map[string]any{"env": "toy", "example_id": "q0", "base_url": model.URL + "/v1", "model": "m"}
		for k, v := range over {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		name   string
		body   map[string]any
		status int
		code   string
	}{
		{"private address", req(map[string]any{"base_url": "http://10.0.0.1:8000/v1"}), 403, CodeForbiddenTarget},
		{"metadata service", req(map[string]any{"base_url": "http://169.254.169.254/latest"}), 403, CodeForbiddenTarget},
		{"lookalike host", req(map[string]any{"base_url": "http://localhost.example.com:80/v1"}), 403, CodeForbiddenTarget},
		{"file url", req(map[string]any{"base_url": "file:///etc/passwd"}), 400, CodeBadRequest},
		{"credentials in url", req(map[string]any{"base_url": "http://u:p@127.0.0.1:1/v1"}), 400, CodeBadRequest},
		{"no base url", req(map[string]any{"base_url": ""}), 400, CodeBadRequest},
		{"key env not allowed", req(map[string]any{"api_key_env": "HOME"}), 403, CodeForbiddenTarget},
		{"key env unset", req(map[string]any{"api_key_env": "SVBENCH_TEST_UNSET_KEY"}), 400, CodeBadRequest},
		{"no model", req(map[string]any{"model": ""}), 400, CodeBadRequest},
		{"too many turns", req(map[string]any{"max_turns": 1000}), 400, CodeBadRequest},
		{"unknown env", req(map[string]any{"env": "zz"}), 404, CodeUnknownEnv},
		{"unknown example", req(map[string]any{"example_id": "zz"}), 400, CodeUnknownExample},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ls.do(t, "POST", "/v1/rollout", tc.body)
			if status != tc.status || errCode(t, body) != tc.code {
				t.Errorf("%d %v; want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	if n := model.calls.Load(); n != 0 {
		t.Errorf("refused requests reached the model %d times", n)
	}

	// An explicit allow-list replaces the loopback default.
	cfg.RolloutAllow = []string{"127.0.0.1:1", "inference.internal"}
	strict := startServer(t, cfg)
	status, body := strict.do(t, "POST", "/v1/rollout", req(nil))
	if status != 403 || errCode(t, body) != CodeForbiddenTarget {
		t.Errorf("port outside allow-list: %d %v", status, body)
	}
}

func TestRolloutModelFailures(t *testing.T) {
	t.Run("server error", func(t *testing.T) {
		model := newFakeModel(t)
		model.status = 500
		ls := startServer(t, toyConfig())
		status, body := ls.do(t, "POST", "/v1/rollout", map[string]any{"env": "toy", "example_id": "q0", "base_url": model.URL + "/v1", "model": "m"})
		if status != http.StatusBadGateway || errCode(t, body) != CodeModelError || body["rollout"] == nil {
			t.Errorf("%d %v", status, body)
		}
	})
	t.Run("redirect not followed", func(t *testing.T) {
		model := newFakeModel(t)
		redirect := httptest.NewServer(http.RedirectHandler(model.URL+"/v1/chat/completions", http.StatusTemporaryRedirect))
		defer redirect.Close()
		ls := startServer(t, toyConfig())
		status, body := ls.do(t, "POST", "/v1/rollout", map[string]any{"env": "toy", "example_id": "q0", "base_url": redirect.URL + "/v1", "model": "m"})
		if status != http.StatusBadGateway || errCode(t, body) != CodeModelError {
			t.Errorf("%d %v", status, body)
		}
		if model.calls.Load() != 0 {
			t.Error("redirect was followed")
		}
	})
	t.Run("busy", func(t *testing.T) {
		model := newFakeModel(t)
		model.arrived, model.hold = make(chan struct{}, 1), make(chan struct{})
		cfg := toyConfig()
		cfg.MaxRollouts = 1
		ls := startServer(t, cfg)
		rollout := map[string]any{"env": "toy", "example_id": "q0", "base_url": model.URL + "/v1", "model": "m"}
		first := make(chan int, 1)
		go func() {
			status, _ := ls.do(t, "POST", "/v1/rollout", rollout)
			first <- status
		}()
		// The first rollout is in its model call, holding the only slot,
		// until hold is closed; the 30 s bounds are hang guards only.
		select {
		case <-model.arrived:
		case <-time.After(30 * time.Second):
			t.Fatal("the first rollout never reached the model")
		}
		second, _ := ls.do(t, "POST", "/v1/rollout", rollout)
		close(model.hold)
		select {
		case s := <-first:
			if s != 200 || second != http.StatusTooManyRequests {
				t.Errorf("statuses %v", []int{s, second})
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the first rollout did not finish")
		}
	})
}

// TestPanicBecomes500 drives a panic through a handler (a model client
// constructor that panics) and checks the client gets a JSON 500 with the
// request id while the server keeps serving.
func TestPanicBecomes500(t *testing.T) {
	cfg := toyConfig()
	cfg.ModelClient = func(string, string, *http.Client) (llm.Client, error) { panic("constructor bug") }
	ls := startServer(t, cfg)
	status, body := ls.do(t, "POST", "/v1/rollout", map[string]any{"env": "toy", "example_id": "q0", "base_url": "http://127.0.0.1:9/v1", "model": "m"}, "X-Request-Id", "req-panic")
	if status != 500 || errCode(t, body) != CodeInternal || body["request_id"] != "req-panic" || !strings.Contains(body["error"].(map[string]any)["message"].(string), "req-panic") {
		t.Errorf("%d %v", status, body)
	}
	if status, _ := ls.do(t, "GET", "/healthz", nil); status != 200 {
		t.Errorf("server unhealthy after panic: %d", status)
	}
}
