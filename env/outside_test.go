package env

import "testing"

func TestOutsideRollout(t *testing.T) {
	ro := OutsideRollout([]Message{
		{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "scan", Arguments: "{}"}}},
		{Role: RoleTool, Content: "ok"},
		{Role: RoleAssistant, Content: "done"},
	})
	if ro.Turns != 2 || len(ro.ToolCalls) != 1 || ro.ToolCalls[0].Turn != 1 || ro.ToolCalls[0].Name != "scan" || ro.FinalText() != "done" {
		t.Errorf("%+v", ro)
	}
}
