package server

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
	_ "github.com/svbench/svbench/envs/netlogs"
)

// TestServeHandsOutTrainRows: with E1's shipped splits, a trainer that
// names no split gets train rows, test rows go out only when asked for
// (with a warning in the answer and one in the log), and a test row is
// still scored by id.
func TestServeHandsOutTrainRows(t *testing.T) {
	var logs bytes.Buffer
	ls := startServer(t, Config{Registry: env.Default, Envs: []string{"e1"}, Logger: slog.New(slog.NewTextHandler(&logs, nil))})

	_, body := ls.do(t, "GET", "/v1/environments", nil)
	e := body["environments"].([]any)[0].(map[string]any)
	if e["default_split"] != "train" || e["dataset"].(map[string]any)["id"] != "embedded:e1-train" {
		t.Errorf("environment: default split %v, dataset %v", e["default_split"], e["dataset"])
	}
	if ds := e["datasets"].(map[string]any); len(ds) != 3 {
		t.Errorf("datasets per split: %v", ds)
	}

	_, body = ls.do(t, "GET", "/v1/environments/e1/examples?limit=5", nil)
	if body["split"] != "train" || body["warning"] != nil {
		t.Errorf("default: split %v warning %v", body["split"], body["warning"])
	}
	for _, x := range body["examples"].([]any) {
		if id := x.(map[string]any)["example_id"].(string); !strings.HasPrefix(id, "train-") {
			t.Errorf("default split handed out %s", id)
		}
	}

	_, body = ls.do(t, "GET", "/v1/environments/e1/examples?split=test&limit=1", nil)
	if body["split"] != "test" || body["warning"] == nil || body["dataset"].(map[string]any)["split"] != "test" {
		t.Errorf("test split: split %v warning %v dataset %v", body["split"], body["warning"], body["dataset"])
	}
	testID := body["examples"].([]any)[0].(map[string]any)["example_id"].(string)
	ls.do(t, "GET", "/v1/environments/e1/examples?split=test&limit=1", nil)
	if n := strings.Count(logs.String(), "serving the evaluation split to a caller"); n != 1 {
		t.Errorf("the log warned %d times, want once:\n%s", n, logs.String())
	}

	status, body := ls.do(t, "POST", "/v1/score", map[string]any{"items": []map[string]any{{"env": "e1", "example_id": testID, "completion": `{"label": "Benign", "confidence": 0.5}`}}})
	if status != 200 || body["results"].([]any)[0].(map[string]any)["error"] != nil {
		t.Errorf("scoring test row %s by id: %d %v", testID, status, body)
	}
	if status, body := ls.do(t, "GET", "/v1/environments/e1/examples?split=holdout", nil); status != 400 {
		t.Errorf("unknown split: %d %v", status, body)
	}
}
