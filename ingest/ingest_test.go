package ingest

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/svbench/svbench/env"
)

func TestDecodeTrainerRow(t *testing.T) {
	msgs := `[{"role": "assistant", "content": "{\"label\": \"Benign\"}"}]`
	enc, _ := json.Marshal(msgs)
	tests := []struct {
		name      string
		row       string
		wantTurns int
		wantText  string
		wantComp  map[string]float64
		wantStep  *int64
		wantPID   string
		wantInfo  bool
		wantErr   bool
	}{
		{
			name:      "string-encoded completion and metrics",
			row:       `{"prompt": "[{\"role\": \"user\", \"content\": \"q\"}]", "completion": ` + string(enc) + `, "metrics": "{\"reward_accuracy\": 1, \"format_reward\": 0.5, \"num_turns\": 1}", "step": 40, "problem_id": 4, "sample_id": 0, "info": ""}`,
			wantTurns: 1, wantText: `{"label": "Benign"}`,
			wantComp: map[string]float64{"accuracy": 1, "format": 0.5}, wantStep: ptr(int64(40)), wantPID: "4",
		},
		{
			name:     "a plain answer string that is JSON is not mistaken for messages",
			row:      `{"completion": "{\"label\": \"Malicious\"}", "step": 1}`,
			wantText: `{"label": "Malicious"}`, wantStep: ptr(int64(1)),
		},
		{
			name:     "messages already decoded, metrics as object, vf-eval reward columns, string ids",
			row:      `{"completion": [{"role": "assistant", "content": "x"}], "metrics": {"judge_reward": 0.25}, "reward_calibration": 0.75, "problem_id": "p-7", "env_name": "o/sv-env-network-logs"}`,
			wantText: "x", wantComp: map[string]float64{"judge": 0.25, "calibration": 0.75}, wantPID: "p-7",
		},
		{
			name:     "info as JSON text becomes an object",
			row:      `{"completion": "a", "info": "{\"violations\": []}", "sample_id": 3}`,
			wantText: "a", wantInfo: true,
		},
		{name: "step not an integer", row: `{"completion": "a", "step": 1.5}`, wantErr: true},
		{name: "advantage not a number", row: `{"completion": "a", "advantage": "big"}`, wantErr: true},
		{name: "metrics not an object", row: `{"completion": "a", "metrics": "[1, 2]"}`, wantErr: true},
		{name: "not an object", row: `[1]`, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Decode([]byte(tc.row))
			if tc.wantErr {
				if err == nil {
					t.Fatal("want an error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := env.LastAssistantText(r.Completion); got != tc.wantText {
				t.Fatalf("final text %q, want %q", got, tc.wantText)
			}
			for k, v := range tc.wantComp {
				if r.Trainer.Components[k] != v {
					t.Fatalf("components %v, want %v", r.Trainer.Components, tc.wantComp)
				}
			}
			if tc.wantStep != nil && (r.Trainer.Step == nil || *r.Trainer.Step != *tc.wantStep) {
				t.Fatalf("step %v", r.Trainer.Step)
			}
			if r.Trainer.ProblemID != tc.wantPID {
				t.Fatalf("problem id %q, want %q", r.Trainer.ProblemID, tc.wantPID)
			}
			var norm map[string]json.RawMessage
			if err := json.Unmarshal(r.Normalized, &norm); err != nil {
				t.Fatal(err)
			}
			if info, ok := norm["info"]; ok != tc.wantInfo || (ok && info[0] != '{') {
				t.Fatalf("normalized info = %s (present %v)", info, ok)
			}
		})
	}
}

func TestComponentName(t *testing.T) {
	for in, want := range map[string]string{
		"reward_accuracy": "accuracy", "format_reward": "format", "reward_asymmetric_cost": "asymmetric_cost",
		"tool_observation_reward": "tool_observation", "reward_config_auditing": "config_auditing", "judge_reward": "judge",
		"num_turns": "", "run_opa_calls": "", "reward": "",
	} {
		got, ok := ComponentName(in)
		if got != want || ok != (want != "") {
			t.Errorf("ComponentName(%q) = %q, %v", in, got, ok)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// FuzzDecode: trainer rows are written by other programs and carry model
// output; decoding must never panic and must round-trip to valid JSON.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"prompt": "[{\"role\": \"user\", \"content\": \"q\"}]", "completion": "[{\"role\": \"assistant\", \"content\": \"a\"}]", "metrics": "{\"reward_accuracy\": 1}", "step": 3}`))
	f.Add([]byte(`{"completion": "{\"label\": 1}", "info": "{\"violations\": [{\"tool\": \"semgrep\"}]}", "advantage": -0.5}`))
	f.Add([]byte(`{"metrics": "", "answer": "", "problem_id": null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := Decode(b)
		if err != nil {
			return
		}
		if !json.Valid(r.Normalized) {
			t.Fatalf("normalized row is not JSON: %s", r.Normalized)
		}
	})
}

// TestDecodeErrorKeepsRunesWhole: a field that is not a number is quoted in
// the error clipped to 40 bytes, never cut inside a UTF-8 sequence (the
// raw JSON {"xy":"ééé…"} puts a 2-byte é across byte 40).
func TestDecodeErrorKeepsRunesWhole(t *testing.T) {
	for _, field := range []string{"step", "problem_id"} {
		val, _ := json.Marshal(map[string]any{"xy": strings.Repeat("é", 40)})
		row := `{"completion": "x", "` + field + `": ` + string(val) + `}`
		_, err := Decode([]byte(row))
		if err == nil {
			t.Fatalf("%s: want an error for a non-number", field)
		}
		if msg := err.Error(); !utf8.ValidString(msg) || !strings.Contains(msg, "…") {
			t.Errorf("%s: error cut inside a rune or not marked: %q", field, msg)
		}
	}
}
