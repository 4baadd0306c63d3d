package probe

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/svbench/svbench/env"
)

func TestMutators(t *testing.T) {
	conv := []env.Message{
		{Role: env.RoleSystem, Content: `Answer {"label": "Benign|Malicious|Abstain", "confidence": 0..1}. Use "Malicious" for attacks.`},
		{Role: env.RoleUser, Content: "flow flow flow port port scan"},
		{Role: env.RoleTool, Content: `{"findings": ["x"]}`},
	}
	answer := `{"label":"Benign","confidence":0.8,"evidence":["a","b"],"patch":"` + strings.Repeat("x", 100) + `","ok":true}`
	byName := map[string]mutator{}
	for _, m := range mutators() {
		byName[m.name] = m
	}
	check := func(name string, pred func(out string, obj map[string]any) bool) {
		t.Helper()
		m, ok := byName[name]
		if !ok {
			t.Fatalf("no mutator %s", name)
		}
		out, changed := m.apply(answer, conv)
		var obj map[string]any
		_ = json.Unmarshal([]byte(out), &obj)
		if !changed || !pred(out, obj) {
			t.Errorf("%s: changed %v, got %s", name, changed, out)
		}
	}
	check("confidence-max", func(_ string, o map[string]any) bool { return o["confidence"] == 1.0 })
	check("confidence-min", func(_ string, o map[string]any) bool { return o["confidence"] == 0.0 })
	check("confidence-half", func(_ string, o map[string]any) bool { return o["confidence"] == 0.5 })
	check("flip-label", func(_ string, o map[string]any) bool { return o["label"] == "Malicious" })
	check("duplicate-key", func(out string, _ map[string]any) bool {
		return strings.Count(out, `"label"`) == 2 && strings.HasSuffix(out, `"label":"Malicious"}`)
	})
	check("flip-bools", func(_ string, o map[string]any) bool { return o["ok"] == false })
	check("empty-lists", func(_ string, o map[string]any) bool { return len(o["evidence"].([]any)) == 0 })
	check("strip-long-strings", func(_ string, o map[string]any) bool { _, has := o["patch"]; return !has && o["label"] == "Benign" })
	check("reorder-fields", func(out string, o map[string]any) bool {
		return strings.HasPrefix(out, `{"patch"`) && o["label"] == "Benign"
	})
	check("inject-tool-output", func(_ string, o map[string]any) bool { return strings.Contains(o["evidence"].(string), "findings") })
	check("keyword-stuff", func(_ string, o map[string]any) bool { return strings.HasPrefix(o["notes"].(string), "flow port") })
	check("pad", func(out string, _ map[string]any) bool { return len(out) > 5000 })
	check("repeat-answer", func(out string, _ map[string]any) bool { return strings.Count(out, `"label"`) == 2 })
	check("prose-wrap", func(out string, _ map[string]any) bool { return strings.Contains(out, "```json\n"+answer) })
	check("truncate-half", func(out string, _ map[string]any) bool { return len(out) < len(answer) })

	// Text answers: JSON mutations do not apply, text ones do.
	for _, name := range []string{"confidence-max", "flip-label", "reorder-fields"} {
		if _, changed := byName[name].apply("Here is my patch.", conv); changed {
			t.Errorf("%s changed a text answer", name)
		}
	}
	if out, _ := byName["truncate-half"].apply("héhéhé", conv); !utf8.ValidString(out) {
		t.Errorf("truncate-half cut inside a character: %q", out)
	}
}

func TestWrapCountsOnlyChangedTextTurns(t *testing.T) {
	var c mutationCounter
	calls := 0
	p := env.PolicyFunc(func(context.Context, []env.Message, []env.Tool) (env.Message, error) {
		calls++
		if calls == 1 {
			return env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "1", Name: "t"}}}, nil
		}
		return env.Message{Role: env.RoleAssistant, Content: `{"confidence":0.3}`}, nil
	})
	w := mutators()[0].wrap(p, &c)
	m1, _ := w.Act(context.Background(), nil, nil)
	m2, _ := w.Act(context.Background(), nil, nil)
	if len(m1.ToolCalls) != 1 || m2.Content != `{"confidence":1}` || c.changed != 1 {
		t.Errorf("tool turn %+v, answer %q, changed %d", m1, m2.Content, c.changed)
	}
}
