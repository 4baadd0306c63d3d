package env

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
)

func TestCompletionUnmarshal(t *testing.T) {
	cases := []struct {
		in       string
		wantLast string
		wantN    int
		wantErr  string
	}{
		{`"plain text"`, "plain text", 1, ""},
		{`[{"role": "assistant", "content": "a"}, {"role": "tool", "content": "t", "tool_call_id": "1"}, {"role": "assistant", "content": "b"}]`, "b", 3, ""},
		{`{"content": "single"}`, "single", 1, ""},
		{`null`, "", 0, ""},
		{`[{"content": "no role"}]`, "", 0, `"role" missing`},
		{`42`, "", 0, "string or a list"},
	}
	for _, tc := range cases {
		var c Completion
		err := json.Unmarshal([]byte(tc.in), &c)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.in, err)
			continue
		}
		if len(c.Messages) != tc.wantN || LastAssistantText(c.Messages) != tc.wantLast {
			t.Errorf("%s: %+v", tc.in, c.Messages)
		}
	}
}

func TestRegistryResolvesEveryForm(t *testing.T) {
	r := NewRegistry()
	r.Register(Spec{ID: "network-logs", Aliases: []string{"e1"}, New: func(Options) (Environment, error) { return nil, nil }})
	for _, name := range []string{"e1", "E1", "network-logs", "sv-env-network-logs", "network_logs", " Network-Logs "} {
		id, err := r.Resolve(name)
		if err != nil || id != "network-logs" {
			t.Errorf("Resolve(%q) = %q, %v", name, id, err)
		}
	}
	// An unknown name lists the short ids people type beside the full ones,
	// and suggests a near miss of a long name.
	if _, err := r.Resolve("e9"); err == nil || !strings.Contains(err.Error(), "known: e1 network-logs") || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("unknown name: %v", err)
	}
	if _, err := r.Resolve("network-log"); err == nil || !strings.Contains(err.Error(), `did you mean "network-logs"`) {
		t.Errorf("near miss: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("duplicate alias did not panic")
		}
	}()
	r.Register(Spec{ID: "other", Aliases: []string{"E1"}, New: func(Options) (Environment, error) { return nil, nil }})
}

func TestRubricIsolatesBadRewardFunctions(t *testing.T) {
	rb := Rubric[int]{Name: "t", Rewards: []Reward[int]{
		{Name: "good", Weight: 2, Fn: func(_ Example, p int) float64 { return float64(p) }},
		{Name: "panics", Weight: 1, Fn: func(Example, int) float64 { panic("boom") }},
		{Name: "nan", Weight: 1, Fn: func(Example, int) float64 { return math.NaN() }},
	}}
	s := rb.Evaluate(Example{}, 3, nil)
	if s.Total != 6 || s.Components["good"] != 3 || s.Components["panics"] != 0 || s.Components["nan"] != 0 {
		t.Fatalf("score %+v", s)
	}
	errs, _ := s.Parsed["reward_errors"].([]string)
	if len(errs) != 2 {
		t.Fatalf("reward_errors = %v", s.Parsed["reward_errors"])
	}
	if s.Weights["good"] != 2 || s.Rubric != "t" {
		t.Fatalf("weights %v rubric %q", s.Weights, s.Rubric)
	}
}
