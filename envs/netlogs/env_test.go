package netlogs

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svbench/svbench/dataset"
	"github.com/svbench/svbench/env"
)

func TestRegistered(t *testing.T) {
	for _, name := range []string{"network-logs", "e1", "sv-env-network-logs", "E1"} {
		id, err := env.Default.Resolve(name)
		if err != nil || id != ID {
			t.Errorf("Resolve(%q) = %q, %v", name, id, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name  string
		data  string
		line  int
		field string
	}{
		{"bad JSON", `{"question": "q", "answer": "Benign"}` + "\n{not json\n", 2, ""},
		{"missing answer", `{"question": "q"}`, 1, "answer"},
		{"bad answer", `{"question": "q", "answer": "Benign"}` + "\n\n" + `{"question": "q", "answer": "Maybe"}`, 3, "answer"},
		{"answer 2", `{"question": "q", "answer": 2}`, 1, "answer"},
		{"missing question", `{"answer": 1}`, 1, "question"},
		{"meta not object", `{"question": "q", "answer": 0, "meta": []}`, 1, "meta"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rows.jsonl")
			if err := os.WriteFile(path, []byte(tt.data), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New().Load(context.Background(), path)
			var re *dataset.RowError
			if !errors.As(err, &re) {
				t.Fatalf("want a RowError, got %v", err)
			}
			if re.File != path || re.Line != tt.line || re.Field != tt.field {
				t.Errorf("error %q names %s:%d field %q; want line %d field %q", err, re.File, re.Line, re.Field, tt.line, tt.field)
			}
		})
	}
}

func TestLoadFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "rows.jsonl")
	data := `{"question": "Device x observed tcp 1→23, duration ?, bytes ?, flags [S]. Decide.", "answer": 1, "meta": {"hash": "abc"}}
{"id": "r2", "question": "q2", "answer": "benign"}
{"question": "q3", "answer": "0"}
`
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	ds, err := New().Load(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := []string{"abc", "r2", "line-3"}
	wantAns := []string{`"Malicious"`, `"Benign"`, `"Benign"`}
	for i, ex := range ds.Examples {
		if ex.ID != wantIDs[i] || string(ex.Answer) != wantAns[i] {
			t.Errorf("row %d: id %q answer %s; want %q %s", i, ex.ID, ex.Answer, wantIDs[i], wantAns[i])
		}
		if len(ex.Prompt) != 2 || ex.Prompt[0].Content != SystemPrompt {
			t.Errorf("row %d: prompt %v", i, ex.Prompt)
		}
	}
	if ds.Info.Rows != 3 || !strings.HasPrefix(ds.Info.Revision, "sha256:") {
		t.Errorf("info %+v", ds.Info)
	}
}

func TestParseExampleAndScore(t *testing.T) {
	e := New()
	ex, err := e.ParseExample(json.RawMessage(`{"completion": "ignored here", "answer": "Malicious"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := &env.Rollout{Completion: []env.Message{{Role: env.RoleAssistant, Content: `{"label": "Malicious", "confidence": 0.9}`}}}
	for _, rubric := range []string{"", RubricDefault, RubricReference} {
		s, err := e.Score(context.Background(), ex, r, rubric)
		if err != nil {
			t.Fatal(err)
		}
		if s.Parsed["predicted_label"] != LabelMalicious || s.Parsed["confidence"] != 0.9 || s.Parsed["format_valid"] != true {
			t.Errorf("rubric %q parsed view %v", rubric, s.Parsed)
		}
	}
	if _, err := e.Score(context.Background(), ex, r, "nope"); err == nil {
		t.Error("unknown rubric must fail")
	}
	// An example built elsewhere (no payload) still scores from its raw answer.
	bare := env.Example{ID: "x", Answer: json.RawMessage(`1`)}
	if s, err := e.Score(context.Background(), bare, r, RubricReference); err != nil || s.Components["accuracy"] != 1 {
		t.Errorf("bare example: %v %v", s, err)
	}
	if _, err := e.ParseExample(json.RawMessage(`{"completion": "x"}`)); err == nil {
		t.Error("a row without answer must fail")
	}
	if _, err := e.Start(context.Background(), ex); err == nil {
		t.Error("an example without a question cannot start an episode")
	}
}
