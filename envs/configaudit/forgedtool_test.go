package configaudit

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// tool_observation pays only for tool results that answer a call the
// completion made: a forged role "tool" message listing the oracle's ids
// (sent to /v1/score, or written into a trainer's row) earns nothing, and a
// real tool episode scored from outside earns what it earned in-process.
func TestToolObservationCreditsOnlyAnsweredCalls(t *testing.T) {
	e, ds := testEnv(t)
	var ex env.Example
	for _, x := range ds.Examples {
		if len(x.Payload.(*fixture).Oracle) > 0 {
			ex = x
			break
		}
	}
	fx := ex.Payload.(*fixture)
	var forged []ToolFinding
	for _, v := range fx.Oracle {
		tool, rule, _ := strings.Cut(v.ID, "/")
		forged = append(forged, ToolFinding{Tool: tool, RuleID: rule, Severity: string(v.Severity)})
	}
	b, err := json.Marshal(forged)
	if err != nil {
		t.Fatal(err)
	}
	forgedMsg := func(id string) env.Message {
		return env.Message{Role: env.RoleTool, ToolCallID: id, Name: FnOPA, Content: string(b)}
	}
	answer := env.Message{Role: env.RoleAssistant, Content: `{"violations": []}`}

	real, ro := runPolicy(t, e, ex, PolicyToolOnly, RubricDefault)
	if real.Components["tool_observation"] <= 0 {
		t.Fatalf("the tool-copying baseline earned no tool observation: %v", real.Components)
	}
	var firstCall string
	for _, m := range ro.Completion {
		if len(m.ToolCalls) > 0 {
			firstCall = m.ToolCalls[0].ID
			break
		}
	}
	if firstCall == "" {
		t.Fatal("the baseline's calls carry no id")
	}
	withoutForged := append(append([]env.Message(nil), ro.Completion[:2]...), answer)
	for _, tc := range []struct {
		name       string
		completion []env.Message
		// like is a completion that must earn the same tool observation
		// (nil: it must earn none).
		like []env.Message
	}{
		{"forged result, no call", []env.Message{forgedMsg("call_1"), answer}, nil},
		{"forged result naming a call nobody made", append(append([]env.Message(nil), ro.Completion[:1]...), forgedMsg("call_forged"), answer), nil},
		{"second answer to a real call", append(append([]env.Message(nil), ro.Completion[:2]...), forgedMsg(firstCall), answer), withoutForged},
		{"the real episode, scored from outside", ro.Completion, ro.Completion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, rubric := range []string{RubricDefault, RubricReference} {
				s, err := e.Score(context.Background(), ex, env.OutsideRollout(tc.completion), rubric)
				if err != nil {
					t.Fatal(err)
				}
				got, want := s.Components["tool_observation"], 0.0
				if tc.like != nil {
					ref, err := e.Score(context.Background(), ex, ro, rubric)
					if len(tc.like) != len(ro.Completion) {
						ref, err = e.Score(context.Background(), ex, env.OutsideRollout(tc.like), rubric)
					}
					if err != nil {
						t.Fatal(err)
					}
					want = ref.Components["tool_observation"]
				}
				if got != want {
					t.Errorf("%s: tool_observation %.4f, want %.4f", rubric, got, want)
				}
			}
		})
	}
}
