package configaudit

import (
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

// Corners the real E2 rows lack: hand-written.
func TestTrainerRowHelpers(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{`[{'a': None, 'b': True, "c": -1.5e3, 'd': ('x', 'y\'s'),}]`, `[{"a":null,"b":true,"c":-1.5e3,"d":["x","y's"]}]`, true},
		{`{'k': 'caf\xe9'}`, `{"k":"café"}`, true},
		{`[1, 2`, "", false},
		{`{1: 2}`, "", false},
		{`__import__('os')`, "", false},
		{strings.Repeat("[", 100) + strings.Repeat("]", 100), "", false},
	} {
		got, ok := pyLiteralJSON(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("pyLiteralJSON(%.40q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	for _, c := range []struct {
		text string
		want bool
	}{
		{`{"violations": []}`, true},
		{"```json\n{\"violations\": []}\n```", true},
		{"thinking…\n{\"violations\": []}", false},
		{"```diff\n-x\n```\n```json\n{}\n```", false},
		{"", false},
	} {
		if got := wholeAnswer(c.text); got != c.want {
			t.Errorf("wholeAnswer(%q) = %v", c.text, got)
		}
	}
	if cfg, ok := referenceConfig("\nConfiguration:\n```text\nresource \"a\" \"b\" {}\n\n```"); !ok || cfg != "resource \"a\" \"b\" {}\n" {
		t.Errorf("referenceConfig = %q, %v", cfg, ok)
	}
	if _, ok := referenceConfig("plain yaml: 1"); ok {
		t.Error("plain content taken for a reference fence")
	}
	for in, want := range map[string]string{"/app/x/bad.tf": "app/x/bad.tf", "/a/../../etc/passwd": "/a/../../etc/passwd", "rel/ok.yaml": "rel/ok.yaml"} {
		if got := relativeFixturePath(in); got != want {
			t.Errorf("relativeFixturePath(%q) = %q, want %q", in, got, want)
		}
	}
	if _, err := readFixture("/etc/passwd"); err == nil {
		t.Error("readFixture opened an absolute path")
	}
	// A final answer alone in content, no reasoning: kept as it is.
	var e Env
	msgs := []env.Message{{Role: env.RoleAssistant, Content: `{"violations": []}`}}
	got, note := e.TrainerView(msgs)
	if got[0].Content != msgs[0].Content || note != "" {
		t.Errorf("TrainerView changed a plain answer: %q, %q", got[0].Content, note)
	}
	// Reasoning in front of a valid answer: the reference read no answer.
	msgs = []env.Message{{Role: env.RoleAssistant, Reasoning: "let me think", Content: `{"violations": []}`}}
	got, note = e.TrainerView(msgs)
	if got[0].Content != "" || note == "" || msgs[0].Content == "" {
		t.Errorf("TrainerView = %q, %q (input must stay untouched: %q)", got[0].Content, note, msgs[0].Content)
	}
}
