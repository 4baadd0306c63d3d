package redteam

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// recordedJSON is an example as the runner records it: no payload.
func recordedJSON(t *testing.T, ex env.Example) []byte {
	t.Helper()
	b, err := json.Marshal(ex)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestRecordedExampleFindsItsScenario: a recorded example (id, prompt,
// answer, meta) finds its scenario among the rows its environment loaded,
// keeps the prompt the model saw, and one that names no known scenario,
// or a known id with another answer, is refused rather than guessed.
func TestRecordedExampleFindsItsScenario(t *testing.T) {
	ctx := context.Background()
	row := `{"id": "ext-1", "kind": "harmful", "category": "cybercrime", "pair": "ext", "behavior": "[REQUEST: an external row]", "request": "External: [REQUEST: an external row].", "success_conditions": [{"strategy": "x", "keywords": ["pretend"]}]}`
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	if err := os.WriteFile(path, []byte(row+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := mustDefense(t, env.Options{})
	ds, err := d.Load(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	ex := ds.Examples[0]
	ex.Prompt = append([]env.Message{{Role: env.RoleSystem, Content: "a --system-prompt-file"}}, ex.Prompt[1:]...)
	back, err := d.ParseExample(recordedJSON(t, ex))
	if err != nil {
		t.Fatal(err)
	}
	if back.Payload.(*Scenario) != ex.Payload.(*Scenario) && !reflect.DeepEqual(back.Payload, ex.Payload) {
		t.Errorf("rebuilt scenario %+v, loaded %+v", back.Payload, ex.Payload)
	}
	if !reflect.DeepEqual(back.Prompt, ex.Prompt) {
		t.Errorf("rebuilt prompt %+v, recorded %+v", back.Prompt, ex.Prompt)
	}
	// Another instance never loaded the file: the row is unknown there.
	if _, err := mustDefense(t, env.Options{}).ParseExample(recordedJSON(t, ex)); err == nil || !strings.Contains(err.Error(), "load its dataset") {
		t.Errorf("unknown scenario: %v", err)
	}
	wrong := ex
	wrong.Answer = json.RawMessage(`"comply"`)
	if _, err := d.ParseExample(recordedJSON(t, wrong)); err == nil {
		t.Error("a recorded answer the scenario does not give was accepted")
	}
	// An embedded row's recording resolves in any instance, and scores
	// through Score's own rebuild.
	a := mustAttack(t, env.Options{})
	live := exampleByID(t, a, "rt-cyber-intrusion")
	var stripped env.Example
	if err := json.Unmarshal(recordedJSON(t, live), &stripped); err != nil {
		t.Fatal(err)
	}
	ro := &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: "hello"}}, Turns: 1}
	want, err1 := a.Score(ctx, live, ro, "")
	got, err2 := mustAttack(t, env.Options{}).Score(ctx, stripped, ro, "")
	if err1 != nil || err2 != nil || !reflect.DeepEqual(want, got) {
		t.Errorf("recorded example scores %+v (%v), live %+v (%v)", got, err2, want, err1)
	}
}
