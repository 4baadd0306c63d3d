package server

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/svbench/svbench/env"
)

// TestAllRegisteredEnvironments serves env.Default as linked into the binary
// (bench_test.go imports every built-in environment) and drives every environment through
// listing, examples and scoring: a new environment needs no server change.
func TestAllRegisteredEnvironments(t *testing.T) {
	ls := startServer(t, Config{Logger: quietLog})
	_, body := ls.do(t, "GET", "/v1/environments", nil)
	envs := body["environments"].([]any)
	if len(envs) != len(env.Default.IDs()) {
		t.Fatalf("serving %d environments, registry has %v", len(envs), env.Default.IDs())
	}
	for _, raw := range envs {
		info := raw.(map[string]any)
		id := info["id"].(string)
		t.Run(id, func(t *testing.T) {
			status, page := ls.do(t, "GET", "/v1/environments/"+id+"/examples?limit=3&seed=1", nil)
			if status != 200 {
				t.Fatalf("examples: %d %v", status, page)
			}
			var items []any
			for _, e := range page["examples"].([]any) {
				ex := e.(map[string]any)
				if len(ex["prompt"].([]any)) == 0 {
					t.Errorf("example %v has no prompt", ex["example_id"])
				}
				ans, _ := json.Marshal(ex["answer"])
				items = append(items,
					map[string]any{"env": id, "example_id": ex["example_id"], "completion": string(ans)},
					map[string]any{"env": id, "example_id": ex["example_id"], "completion": "no idea"})
			}
			status, res := ls.do(t, "POST", "/v1/score", map[string]any{"items": items})
			if status != 200 {
				t.Fatalf("score: %d %v", status, res)
			}
			for i, r := range res["results"].([]any) {
				if e := r.(map[string]any)["error"]; e != nil {
					t.Errorf("item %d: %v", i, e)
				}
			}
		})
	}
}

// FuzzGetRewardBody: any /get_reward body gets a JSON 2xx/4xx answer whose
// lists match the query count.
func FuzzGetRewardBody(f *testing.F) {
	for _, seed := range []string{
		`{"query":["p{\"label\":\"Benign\",\"confidence\":0.5}"],"prompts":["p"],"labels":["synth-x"]}`,
		`{"query":["x"],"labels":["{\"env\":\"e1\",\"answer\":\"Malicious\"}"]}`,
		`{"query":["x"],"labels":["{\"env\":\"e1\",\"example\":{\"answer\":0}}"]}`,
		`{"query":["x","y"],"prompts":["xy","y"],"labels":["{","{\"env\":5}"]}`,
		`{"query":[],"labels":[]}`,
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
		req, _ := http.NewRequest("POST", "/get_reward", bytes.NewReader(body))
		h.ServeHTTP(rec, req)
		if rec.Code >= 500 || rec.Code < 200 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
		if rec.Code != 200 {
			return
		}
		var in RewardRequest
		_ = json.Unmarshal(body, &in)
		var out RewardResponse
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("response: %v", err)
		}
		if len(out.Rewards) != len(in.Query) || len(out.Scores) != len(in.Query) || len(out.Errors) != len(in.Query) {
			t.Fatalf("%d queries, %d rewards", len(in.Query), len(out.Rewards))
		}
		for k, v := range out.ExtraLogs {
			if len(v) != len(in.Query) {
				t.Fatalf("extra_logs[%s]: %d values for %d queries", k, len(v), len(in.Query))
			}
		}
	})
}
