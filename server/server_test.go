package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestEnvironmentsListing(t *testing.T) {
	ls := startServer(t, toyConfig())
	status, body := ls.do(t, "GET", "/v1/environments", nil)
	if status != 200 {
		t.Fatalf("status %d: %v", status, body)
	}
	envs := body["environments"].([]any)
	if len(envs) != 1 {
		t.Fatalf("environments: %v", envs)
	}
	e := envs[0].(map[string]any)
	if e["id"] != "toy" || e["version"] != "0.1.0" || e["system_prompt"] == "" || e["output_schema"] == nil {
		t.Errorf("info: %v", e)
	}
	if !reflect.DeepEqual(e["rubrics"], []any{"default", "strict"}) {
		t.Errorf("rubrics: %v", e["rubrics"])
	}
	tools := e["openai_tools"].([]any)
	fn := tools[0].(map[string]any)
	if fn["type"] != "function" || fn["function"].(map[string]any)["name"] != "lookup" {
		t.Errorf("tools: %v", tools)
	}
	if !reflect.DeepEqual(e["splits"], []any{"test", "train"}) {
		t.Errorf("splits: %v", e["splits"])
	}
	if body["default_env"] != "toy" {
		t.Errorf("default_env: %v", body["default_env"])
	}
}

func TestExamples(t *testing.T) {
	ls := startServer(t, toyConfig())
	ids := func(body map[string]any) []string {
		var out []string
		for _, e := range body["examples"].([]any) {
			out = append(out, e.(map[string]any)["example_id"].(string))
		}
		return out
	}
	for _, name := range []string{"toy", "t1", "sv-env-toy", "TOY_ENV"} {
		status, body := ls.do(t, "GET", "/v1/environments/"+name+"/examples?split=all&limit=3&offset=2", nil)
		if status != 200 {
			t.Fatalf("%s: %d %v", name, status, body)
		}
		if got := ids(body); !reflect.DeepEqual(got, []string{"q2", "q3", "q4"}) {
			t.Errorf("%s: ids %v", name, got)
		}
		if body["total"].(float64) != 20 {
			t.Errorf("total %v", body["total"])
		}
	}
	// Without a split a trainer gets the train rows, never the test ones.
	_, body := ls.do(t, "GET", "/v1/environments/toy/examples?limit=1", nil)
	if body["split"] != "train" || body["total"].(float64) != 16 || body["warning"] != nil {
		t.Errorf("default split: %v %v %v", body["split"], body["total"], body["warning"])
	}
	_, body = ls.do(t, "GET", "/v1/environments/toy/examples?limit=1&offset=1", nil)
	ex := body["examples"].([]any)[0].(map[string]any)
	if ex["answer"] != "yes" || len(ex["prompt"].([]any)) != 2 || len(ex["tools"].([]any)) != 1 {
		t.Errorf("example: %v", ex)
	}

	_, a := ls.do(t, "GET", "/v1/environments/toy/examples?split=all&seed=7&limit=20", nil)
	_, b := ls.do(t, "GET", "/v1/environments/toy/examples?split=all&seed=7&limit=20", nil)
	_, c := ls.do(t, "GET", "/v1/environments/toy/examples?split=all&seed=8&limit=20", nil)
	if !reflect.DeepEqual(ids(a), ids(b)) || reflect.DeepEqual(ids(a), ids(c)) || len(ids(a)) != 20 {
		t.Errorf("seeded order not deterministic or not seed-dependent: %v / %v / %v", ids(a), ids(b), ids(c))
	}

	_, body = ls.do(t, "GET", "/v1/environments/toy/examples?split=test", nil)
	if got := ids(body); !reflect.DeepEqual(got, []string{"q0", "q5", "q10", "q15"}) {
		t.Errorf("test split: %v", got)
	}
	if w, _ := body["warning"].(string); !strings.Contains(w, "evaluation rows") {
		t.Errorf("the test split went out without a warning: %v", body["warning"])
	}
	_, body = ls.do(t, "GET", "/v1/environments/toy/examples?offset=1000", nil)
	if len(body["examples"].([]any)) != 0 {
		t.Errorf("offset past end: %v", body)
	}

	bad := []struct {
		path   string
		status int
		code   string
	}{
		{"/v1/environments/nope/examples", 404, CodeUnknownEnv},
		{"/v1/environments/toy/examples?limit=-1", 400, CodeBadRequest},
		{"/v1/environments/toy/examples?limit=abc", 400, CodeBadRequest},
		{"/v1/environments/toy/examples?limit=100000", 400, CodeBadRequest},
		{"/v1/environments/toy/examples?seed=-3", 400, CodeBadRequest},
		{"/v1/environments/toy/examples?split=validation", 400, CodeBadRequest},
	}
	for _, tc := range bad {
		status, body := ls.do(t, "GET", tc.path, nil)
		if status != tc.status || errCode(t, body) != tc.code {
			t.Errorf("%s: %d %v", tc.path, status, body)
		}
	}
}

func TestScoreBatch(t *testing.T) {
	ls := startServer(t, toyConfig())
	items := []any{
		map[string]any{"env": "toy", "example_id": "q0", "completion": `{"answer": "yes"}`},
		map[string]any{"env": "t1", "example_id": "q1", "completion": []any{map[string]any{"role": "assistant", "content": "```json\n{\"answer\": \"no\"}\n```"}}},
		map[string]any{"env": "toy", "example_id": "q2", "completion": "I think yes", "rubric": "strict"},
		map[string]any{"env": "nope", "example_id": "q0", "completion": "x"},
		map[string]any{"env": "toy", "example_id": "missing", "completion": "x"},
		map[string]any{"env": "toy", "example_id": "q0", "completion": 42},
		map[string]any{"env": "toy", "example_id": "q0"},
		map[string]any{"env": "toy", "example_id": "q0", "completion": "PANIC"},
		map[string]any{"env": "toy", "example": map[string]any{"question": "?", "answer": "no"}, "completion": `{"answer":"no"}`},
		map[string]any{"env": "toy", "answer": "no", "completion": `{"answer":"no"}`},
		map[string]any{"env": "toy", "answer": "maybe", "completion": `{"answer":"no"}`},
		map[string]any{"env": "toy", "example_id": "q0", "answer": "yes", "completion": "x"},
		map[string]any{"env": "toy", "example_id": "q0", "completion": "x", "rubric": "nope"},
		map[string]any{"env": "toy", "example_id": "q0", "completion": "ERROR"},
		"not an object",
		map[string]any{"example_id": "q0", "completion": `{"answer":"yes"}`}, // default env
	}
	status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": items})
	if status != 200 {
		t.Fatalf("status %d: %v", status, body)
	}
	results := body["results"].([]any)
	if len(results) != len(items) {
		t.Fatalf("%d results for %d items", len(results), len(items))
	}
	want := []struct {
		reward float64
		code   string
	}{
		{1.1, ""}, {1.1, ""}, {0, ""}, {0, CodeUnknownEnv}, {0, CodeUnknownExample},
		{0, CodeInvalidItem}, {0, CodeInvalidItem}, {0, CodeScoreFailed}, {1.1, ""}, {1.1, ""},
		{0, CodeInvalidItem}, {0, CodeInvalidItem}, {0, CodeScoreFailed}, {0, CodeScoreFailed}, {0, CodeInvalidItem}, {1.1, ""},
	}
	for i, w := range want {
		r := results[i].(map[string]any)
		code := ""
		if e, ok := r["error"].(map[string]any); ok {
			code = e["code"].(string)
			if e["message"] == "" {
				t.Errorf("item %d: error without message", i)
			}
		}
		if code != w.code || fmt.Sprintf("%.4f", r["reward"].(float64)) != fmt.Sprintf("%.4f", w.reward) {
			t.Errorf("item %d: reward %v error %v; want %v %q", i, r["reward"], r["error"], w.reward, w.code)
		}
		if code == "" && r["components"] == nil {
			t.Errorf("item %d: no components", i)
		}
	}
	if r := results[2].(map[string]any); r["rubric"] != "strict" {
		t.Errorf("rubric not echoed: %v", r)
	}
	if msg := results[10].(map[string]any)["error"].(map[string]any)["message"].(string); !strings.Contains(msg, `"example"`) {
		t.Errorf("answer-only failure should point at the example form: %s", msg)
	}
}

func TestBadRequests(t *testing.T) {
	cfg := toyConfig()
	cfg.MaxBatch = 4
	ls := startServer(t, cfg)
	item := map[string]any{"env": "toy", "example_id": "q0", "completion": "x"}
	cases := []struct {
		name, method, path string
		body               any
		status             int
		code               string
	}{
		{"malformed", "POST", "/v1/score", `{"items": [`, 400, CodeInvalidJSON},
		{"syntax", "POST", "/v1/score", `{"items": [}`, 400, CodeInvalidJSON},
		{"empty", "POST", "/v1/score", ``, 400, CodeInvalidJSON},
		{"two values", "POST", "/v1/score", `{"items": []} {}`, 400, CodeInvalidJSON},
		{"items wrong type", "POST", "/v1/score", `{"items": "all"}`, 400, CodeInvalidJSON},
		{"top level array", "POST", "/v1/score", `[1,2]`, 400, CodeInvalidJSON},
		{"items missing", "POST", "/v1/score", `{}`, 400, CodeBadRequest},
		{"batch too large", "POST", "/v1/score", map[string]any{"items": []any{item, item, item, item, item}}, 413, CodeBatchTooLarge},
		{"wrong method", "GET", "/v1/score", nil, 405, CodeMethodNotAllowed},
		{"unknown path", "GET", "/v2/nothing", nil, 404, CodeNotFound},
		{"reward malformed", "POST", "/get_reward", `{"query": 3}`, 400, CodeInvalidJSON},
		{"reward no labels", "POST", "/get_reward", `{"query": ["a"], "prompts": ["a"]}`, 400, CodeBadRequest},
		{"reward lengths", "POST", "/get_reward", `{"query": ["a"], "prompts": ["a", "b"], "labels": ["q0"]}`, 400, CodeBadRequest},
		{"reward batch", "POST", "/get_reward", `{"query": ["a","a","a","a","a"], "labels": ["q0","q0","q0","q0","q0"]}`, 413, CodeBatchTooLarge},
		{"reward unknown env", "POST", "/get_reward?env=zzz", `{"query": ["a"], "labels": ["q0"]}`, 400, CodeUnknownEnv},
		{"rollout malformed", "POST", "/v1/rollout", `{"env": 1}`, 400, CodeInvalidJSON},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, body := ls.do(t, tc.method, tc.path, tc.body)
			if status != tc.status || errCode(t, body) != tc.code {
				t.Errorf("got %d %v; want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
}

func TestEmptyBatch(t *testing.T) {
	ls := startServer(t, toyConfig())
	status, body := ls.do(t, "POST", "/v1/score", `{"items": []}`)
	if status != 200 || len(body["results"].([]any)) != 0 {
		t.Errorf("%d %v", status, body)
	}
}

func TestHugeCompletion(t *testing.T) {
	ten := strings.Repeat("A", 10<<20)
	item := map[string]any{"env": "toy", "example_id": "q0", "completion": `{"answer":"yes"} ` + ten}
	t.Run("over body limit", func(t *testing.T) {
		ls := startServer(t, toyConfig())
		status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{item}})
		if status != 413 || errCode(t, body) != CodeBodyTooLarge {
			t.Errorf("%d %v", status, body)
		}
	})
	t.Run("within body limit", func(t *testing.T) {
		cfg := toyConfig()
		cfg.MaxBody = 32 << 20
		ls := startServer(t, cfg)
		ok := map[string]any{"env": "toy", "example_id": "q0", "completion": `{"answer":"yes"}`}
		status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{item, ok}})
		if status != 200 {
			t.Fatalf("%d %v", status, body)
		}
		res := body["results"].([]any)
		if e, _ := res[0].(map[string]any)["error"].(map[string]any); e == nil || e["code"] != CodeCompletionSize {
			t.Errorf("10 MB completion: %v", res[0])
		}
		if res[1].(map[string]any)["reward"].(float64) < 1 {
			t.Errorf("the other item should still score: %v", res[1])
		}
	})
}

func TestAuth(t *testing.T) {
	cfg := toyConfig()
	cfg.Token = "s3cret-token"
	ls := startServer(t, cfg)
	for _, tc := range []struct {
		path, auth string
		status     int
	}{
		{"/healthz", "", 200},
		{"/readyz", "", 200},
		{"/v1/environments", "", 401},
		{"/metrics", "", 401},
		{"/v1/environments", "Bearer wrong", 401},
		{"/v1/environments", "Bearer s3cret-token-and-more", 401},
		{"/v1/environments", "Basic s3cret-token", 401},
		{"/v1/environments", "Bearer s3cret-token", 200},
		{"/v1/environments", "bearer s3cret-token", 200},
		{"/nothing", "", 404},
	} {
		var hdr []string
		if tc.auth != "" {
			hdr = []string{"Authorization", tc.auth}
		}
		status, body := ls.do(t, "GET", tc.path, nil, hdr...)
		if status != tc.status {
			t.Errorf("%s %q: %d %v", tc.path, tc.auth, status, body)
		}
		if status == 401 && errCode(t, body) != CodeUnauthorized {
			t.Errorf("401 body: %v", body)
		}
	}
}

func TestRequestIDEchoed(t *testing.T) {
	ls := startServer(t, toyConfig())
	_, body := ls.do(t, "GET", "/nothing", nil, "X-Request-Id", "trainer-42")
	if body["request_id"] != "trainer-42" {
		t.Errorf("request id not echoed: %v", body)
	}
	_, body = ls.do(t, "GET", "/nothing", nil, "X-Request-Id", "bad id\twith spaces")
	if id, _ := body["request_id"].(string); id == "" || strings.Contains(id, " ") {
		t.Errorf("unsafe request id accepted: %v", body)
	}
}

func TestReadinessAndLoadFailure(t *testing.T) {
	cfg := toyConfig()
	s, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	s.Handler().ServeHTTP(rec, mustRequest(t, "GET", "/readyz", ""))
	if rec.Code != 503 {
		t.Errorf("readyz before load: %d", rec.Code)
	}
	rec = newRecorder()
	s.Handler().ServeHTTP(rec, mustRequest(t, "POST", "/v1/score", `{"items":[]}`))
	if rec.Code != 503 || rec.Header().Get("Retry-After") == "" {
		t.Errorf("score before load: %d", rec.Code)
	}
	if err := s.Load(t.Context()); err != nil {
		t.Fatal(err)
	}
	rec = newRecorder()
	s.Handler().ServeHTTP(rec, mustRequest(t, "GET", "/readyz", ""))
	if rec.Code != 200 {
		t.Errorf("readyz after load: %d", rec.Code)
	}

	// A bad --dataset file stops Serve with an error naming file and line.
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(bad, []byte("{\"id\":\"a\",\"answer\":\"yes\"}\n{\"id\":\"b\",\"answer\":\"perhaps\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Datasets = map[string]string{"t1": bad}
	s2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	err = s2.ListenAndServe(t.Context(), "127.0.0.1:0")
	if err == nil || !strings.Contains(err.Error(), "bad.jsonl: line 2") || !strings.Contains(err.Error(), `"answer"`) {
		t.Errorf("load failure: %v", err)
	}

	// A good --dataset file replaces the embedded set.
	good := filepath.Join(dir, "good.jsonl")
	if err := os.WriteFile(good, []byte("{\"id\":\"only\",\"answer\":\"no\",\"question\":\"?\"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg.Datasets = map[string]string{"toy": good}
	live := startServer(t, cfg)
	_, body := live.do(t, "GET", "/v1/environments/toy/examples", nil)
	if body["total"].(float64) != 1 || body["dataset"].(map[string]any)["id"] != good {
		t.Errorf("custom dataset: %v", body)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	for name, cfg := range map[string]Config{
		"unknown env":        {Registry: toyRegistry(), Envs: []string{"e9"}},
		"dataset unknown":    {Registry: toyRegistry(), Datasets: map[string]string{"zz": "x"}},
		"default unknown":    {Registry: toyRegistry(), DefaultEnv: "zz"},
		"empty registry":     {Registry: nil, Envs: []string{"definitely-not-registered"}},
		"allow entry is url": {Registry: toyRegistry(), RolloutAllow: []string{"http://x:1/v1"}},
	} {
		cfg.Logger = quietLog
		if _, err := New(cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

func TestMetrics(t *testing.T) {
	ls := startServer(t, toyConfig())
	ls.do(t, "POST", "/v1/score", map[string]any{"items": []any{
		map[string]any{"env": "toy", "example_id": "q0", "completion": `{"answer":"yes"}`},
		map[string]any{"env": "toy", "example_id": "zz", "completion": "x"},
	}})
	ls.do(t, "GET", "/nothing", nil)
	resp, err := ls.client.Get(ls.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var sb strings.Builder
	if _, err := fmt.Fprint(&sb, readAll(t, resp)); err != nil {
		t.Fatal(err)
	}
	text := sb.String()
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Errorf("content type %q", resp.Header.Get("Content-Type"))
	}
	for _, want := range []string{
		`svbench_http_requests_total{endpoint="/v1/score",code="200"} 1`,
		`svbench_http_requests_total{endpoint="other",code="404"} 1`,
		`svbench_items_total{endpoint="/v1/score",env="toy"} 2`,
		`svbench_item_errors_total{endpoint="/v1/score",env="toy",code="unknown_example"} 1`,
		`svbench_item_duration_seconds_count{endpoint="/v1/score",env="toy"} 2`,
		`svbench_http_request_duration_seconds_bucket{endpoint="/v1/score",le="+Inf"} 1`,
		"# TYPE svbench_http_request_duration_seconds histogram",
		"svbench_ready 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("metrics lack %q\n%s", want, text)
		}
	}
	// Every sample line is "name{labels} value" with a parseable value.
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if strings.HasPrefix(line, "#") {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		var v float64
		if i < 0 || json.Unmarshal([]byte(strings.Replace(line[i+1:], "+Inf", "1e308", 1)), &v) != nil {
			t.Errorf("bad sample line %q", line)
		}
	}
}

func TestHeadAndHealth(t *testing.T) {
	ls := startServer(t, toyConfig())
	req, _ := http.NewRequest("HEAD", ls.URL+"/healthz", nil)
	resp, err := ls.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("HEAD /healthz: %d", resp.StatusCode)
	}
}
