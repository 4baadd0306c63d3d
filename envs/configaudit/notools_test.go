package configaudit

import (
	"context"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// With tool_budget=0 the episode offers no tools and says so, so copying a
// scanner's output is impossible and the score measures reading skill.
func TestNoToolsMode(t *testing.T) {
	_, ds := testEnv(t)
	e, err := NewEnv(env.Options{Params: map[string]string{"tool_budget": "0"}})
	if err != nil {
		t.Fatal(err)
	}
	if info := e.Info(); len(info.Tools) != 0 || strings.Contains(info.SystemPrompt, "run_kubelinter") {
		t.Fatalf("info still offers tools: %d tools, prompt %q", len(info.Tools), info.SystemPrompt)
	}
	ex := ds.Examples[0]
	ep, err := e.Start(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	if len(ep.Tools()) != 0 {
		t.Fatalf("episode offers %d tools", len(ep.Tools()))
	}
	if sys := ep.Prompt()[0]; sys.Role != env.RoleSystem || !strings.Contains(sys.Content, "You have no tools") {
		t.Fatalf("system prompt: %q", sys.Content)
	}
	// The example's own prompt is left as it was.
	if !strings.Contains(ex.Prompt[0].Content, "run_kubelinter") {
		t.Fatal("the shared example was modified")
	}
	// The tool-copying baseline gets nothing to copy: any call it makes is
	// refused, and it earns no tool-observation credit.
	s, ro := runPolicy(t, e, ex, PolicyToolOnly, RubricDefault)
	for _, c := range ro.ToolCalls {
		if c.Error == "" {
			t.Fatalf("a tool ran with budget 0: %+v", c)
		}
	}
	if s.Components["tool_observation"] != 0 {
		t.Fatalf("tool observation credit without tools: %v", s.Components)
	}
}
