package server

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestScoreDeepE2PatchKeepsServing: an E2 answer whose Terraform patch
// nests 80,000 levels deep (the 160 KB answer that overflowed HCL's
// parser's stack and killed `svbench serve`, issue 20) is scored through
// /v1/score as a destructive patch whose reason names the nesting bound,
// and the server goes on answering.
func TestScoreDeepE2PatchKeepsServing(t *testing.T) {
	ls := startServer(t, Config{Logger: quietLog, Envs: []string{"e2"}})
	_, page := ls.do(t, "GET", "/v1/environments/e2/examples?limit=40&seed=3", nil)
	var exampleID any
	var path, content string
	for _, e := range page["examples"].([]any) {
		ex := e.(map[string]any)
		prompt := ex["prompt"].([]any)
		user, _ := prompt[len(prompt)-1].(map[string]any)["content"].(string)
		head, body, ok := strings.Cut(strings.TrimPrefix(user, "File path: "), "\n\n")
		if ok && strings.HasSuffix(head, ".tf") {
			exampleID, path, content = ex["example_id"], head, body
			break
		}
	}
	if exampleID == nil {
		t.Fatal("no Terraform example among the first 40")
	}
	const n = 80_000
	lines := strings.Count(content, "\n")
	patch := fmt.Sprintf("--- a/%s\n+++ b/%s\n@@ -%d,0 +%d,1 @@\n+locals { x = %s%s }\n",
		path, path, lines, lines+1, strings.Repeat("[", n), strings.Repeat("]", n))
	ans, _ := json.Marshal(map[string]any{"violations": []any{}, "patch": patch})
	for _, rubric := range []string{"default", "reference"} {
		items := []any{
			map[string]any{"env": "e2", "example_id": exampleID, "completion": string(ans), "rubric": rubric},
			map[string]any{"env": "e2", "example_id": exampleID, "completion": `{"violations": []}`, "rubric": rubric},
		}
		status, res := ls.do(t, "POST", "/v1/score", map[string]any{"items": items})
		if status != 200 {
			t.Fatalf("%s: score: %d %v", rubric, status, res)
		}
		results := res["results"].([]any)
		if len(results) != 2 {
			t.Fatalf("%s: %d results for 2 items: %v", rubric, len(results), res)
		}
		for i, r := range results {
			if e := r.(map[string]any)["error"]; e != nil {
				t.Fatalf("%s: item %d: %v", rubric, i, e)
			}
		}
		raw, _ := json.Marshal(results[0])
		if !strings.Contains(string(raw), "nested deeper than 256 levels") || !strings.Contains(string(raw), `"patch_structure_ok":false`) {
			t.Errorf("%s: deep patch scored as %s; want a destructive patch naming the nesting bound", rubric, raw)
		}
	}
	if status, _ := ls.do(t, "GET", "/v1/environments", nil); status != 200 {
		t.Errorf("the server stopped answering: %d", status)
	}
}
