package codevuln

import (
	"context"
	"encoding/json"
	textclip "github.com/svbench/svbench/base/clip"
	"strings"
	"testing"

	"github.com/svbench/svbench/env"
)

func toolCall(name, args string) env.Message {
	return env.Message{Role: env.RoleAssistant, ToolCalls: []env.ToolCall{{ID: "c1", Name: name, Arguments: args}}}
}

func TestEpisodeTools(t *testing.T) {
	e := testEnv(t)
	task := e.task("py-089-user-lookup")
	if task == nil {
		t.Skip("task py-089-user-lookup not in the corpus")
	}
	ex := exampleFor(t, e, task.ID)
	raw, err := e.Start(context.Background(), ex)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	// As the runner and the server's sessions drive it: the framework
	// holds the budget and the turn limit.
	epi := env.Limit(raw, env.LimitsOf(e.Info(), 0))
	if len(epi.Tools()) != 3 || !strings.Contains(epi.Prompt()[1].Content, "Task "+task.ID) {
		t.Fatalf("tools %v / prompt %q", epi.Tools(), epi.Prompt()[1].Content)
	}
	ctx := context.Background()
	step := func(name, args string) map[string]any {
		t.Helper()
		r, err := epi.Step(ctx, toolCall(name, args))
		if err != nil || r.Done || len(r.Messages) != 1 {
			t.Fatalf("%s: %v %+v", name, err, r)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(r.Messages[0].Content), &m); err != nil {
			t.Fatalf("%s: tool result is not JSON: %s", name, r.Messages[0].Content)
		}
		return m
	}
	// read_file: task files only (one turn, five calls).
	calls := []env.ToolCall{
		{ID: "r1", Name: FnReadFile, Arguments: `{"path":"accounts.py"}`},
		{ID: "r2", Name: FnReadFile, Arguments: `{"path":"tests/visible/test_behaviour.py"}`},
	}
	refused := []string{"tests/hidden/test_security.py", "../task.json", "/etc/passwd"}
	for i, p := range refused {
		calls = append(calls, env.ToolCall{ID: "x" + string(rune('0'+i)), Name: FnReadFile, Arguments: `{"path":"` + p + `"}`})
	}
	r, err := epi.Step(ctx, env.Message{Role: env.RoleAssistant, ToolCalls: calls})
	if err != nil || len(r.Messages) != len(calls) {
		t.Fatalf("read_file turn: %v %+v", err, r)
	}
	if !strings.Contains(r.Messages[0].Content, "def find_user") || !strings.Contains(r.Messages[1].Content, "unittest") {
		t.Errorf("read_file of task files: %s / %s", textclip.Bytes(r.Messages[0].Content, 80, textclip.Ellipsis), textclip.Bytes(r.Messages[1].Content, 80, textclip.Ellipsis))
	}
	for i := range refused {
		if m := r.Messages[2+i].Content; !strings.Contains(m, "not a readable task file") {
			t.Errorf("read_file %s allowed: %s", refused[i], textclip.Bytes(m, 120, textclip.Ellipsis))
		}
	}
	// run_tests on the original and on the reference fix (as a diff).
	if m := step(FnRunTests, `{}`); m["ok"] != true {
		t.Errorf("visible tests on the original: %v", m)
	}
	diff := ApplyableDiff(Files(task.Src), Files(task.Fixed()), task.Files)
	args, _ := json.Marshal(map[string]string{"patch": diff})
	if m := step(FnRunTests, string(args)); m["ok"] != true || m["total"] == nil {
		t.Errorf("visible tests on the fix: %v", m)
	}
	if m := step(FnStatic, `{}`); m["findings"] == nil {
		t.Errorf("static analysis: %v", m)
	}
	// Budget: 8 calls, all used above.
	if m := step(FnReadFile, `{"path":"accounts.py"}`); !strings.Contains(m["error"].(string), "budget") {
		t.Errorf("call over budget: %v", m)
	}
	r, _ = epi.Step(ctx, env.Message{Role: env.RoleAssistant, Content: "done"})
	if !r.Done || r.Reason != "answered" {
		t.Errorf("final answer: %+v", r)
	}
}

func TestEpisodeMaxTurnsAndUnknownTool(t *testing.T) {
	e := testEnv(t)
	task := e.Tasks()[0]
	raw, err := e.Start(context.Background(), exampleFor(t, e, task.ID))
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	epi := env.Limit(raw, env.LimitsOf(e.Info(), 0))
	r, _ := epi.Step(context.Background(), toolCall("rm_rf", "{}"))
	if !strings.Contains(r.Messages[0].Content, "unknown tool") {
		t.Errorf("unknown tool: %s", r.Messages[0].Content)
	}
	for i := 2; i < e.maxTurns; i++ {
		epi.Step(context.Background(), toolCall("rm_rf", "{}"))
	}
	if r, _ := epi.Step(context.Background(), toolCall(FnReadFile, `{"path":"x"}`)); !r.Done || r.Reason != "max_turns" {
		t.Errorf("turn %d: %+v", e.maxTurns, r)
	}
	if err := epi.Close(); err != nil {
		t.Error(err)
	}
	if r, _ := raw.Step(context.Background(), toolCall(FnRunTests, "{}")); !r.Done {
		t.Errorf("step after Close ran: %+v", r)
	}
}

// TestBaselines runs the built-in policies through an episode the way the
// runner does and scores them.
func TestBaselines(t *testing.T) {
	e := testEnv(t)
	ctx := context.Background()
	run := func(policy string, id string) env.Score {
		p, ok := e.Policy(policy)
		if !ok {
			t.Fatalf("no policy %s", policy)
		}
		ex := exampleFor(t, e, id)
		epi, err := e.Start(ctx, ex)
		if err != nil {
			t.Fatal(err)
		}
		defer epi.Close()
		conv := append([]env.Message{}, epi.Prompt()...)
		var completion []env.Message
		for turn := 0; turn < e.maxTurns; turn++ {
			msg, err := p.Act(ctx, conv, epi.Tools())
			if err != nil {
				t.Fatal(err)
			}
			conv = append(conv, msg)
			completion = append(completion, msg)
			r, err := epi.Step(ctx, msg)
			if err != nil {
				t.Fatal(err)
			}
			conv = append(conv, r.Messages...)
			completion = append(completion, r.Messages...)
			if r.Done {
				break
			}
		}
		s, err := e.Score(ctx, ex, &env.Rollout{Completion: completion}, "")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	id := "py-089-user-lookup"
	if s := run(PolicyReferenceFix, id); !s.Solved {
		t.Errorf("reference-fix not solved: %v", s.Parsed)
	}
	if s := run(PolicyNoop, id); s.Total != 0 || s.Solved {
		t.Errorf("noop scored %v", s.Total)
	}
	// static-autofix: a task whose finding has a rule-based fix.
	for _, task := range e.Tasks() {
		if task.ID == "py-502-session-cookie" || task.ID == "py-327-password-hash" {
			s := run(PolicyStaticAutofix, task.ID)
			t.Logf("static-autofix on %s: reward %.3f solved %v applied %v", task.ID, s.Total, s.Solved, s.Parsed["applied"])
		}
	}
}

func TestAutofixRules(t *testing.T) {
	for _, c := range []struct {
		src, want string
		rules     []string
		isGo      bool
	}{
		{"import yaml\n\ndef f(s):\n    return yaml.load(s, Loader=yaml.FullLoader)\n", "import yaml\n\ndef f(s):\n    return yaml.safe_load(s)\n", []string{"B506"}, false},
		{"import random\n\ndef tok():\n    return random.choice('ab')\n", "import secrets\nimport random\n\ndef tok():\n    return secrets.choice('ab')\n", []string{"B311"}, false},
		{"import hashlib\nh = hashlib.md5(b'x')\n", "import hashlib\nh = hashlib.sha256(b'x')\n", []string{"B303"}, false},
		{"c := &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS10}", "c := &tls.Config{InsecureSkipVerify: false, MinVersion: tls.VersionTLS12}", []string{"SVGO-TLSVERIFY", "SVGO-TLSVERSION"}, true},
		{"import (\n\t\"crypto/md5\"\n)\nvar s = md5.Sum(b)", "import (\n\t\"crypto/sha256\"\n)\nvar s = sha256.Sum256(b)", []string{"SVGO-WEAKCRYPTO"}, true},
		{"x = eval(s)\n", "import ast\nx = ast.literal_eval(s)\n", []string{"B307"}, false},
	} {
		rules := map[string]bool{}
		for _, r := range c.rules {
			rules[r] = true
		}
		if got := autofix(c.src, rules, c.isGo); got != c.want {
			t.Errorf("autofix(%q) =\n%q\nwant\n%q", c.src, got, c.want)
		}
	}
}
